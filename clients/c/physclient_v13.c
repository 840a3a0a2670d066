/* physclient_v13.c - libphysclient, the protocol 1.3 additions: a joint by its file name,
 * ResetToKeyframe and SetJointState. */
#include <string.h>

#include "physclient_internal.h"

int32_t physclient_model_joint_id(const physclient_model_info *info, const char *name) {
  if (!info || !name || !*name) return -1;
  for (size_t i = 0; i < info->n_joints; i++)
    if (info->joints[i].name && strcmp(info->joints[i].name, name) == 0) return info->joints[i].id;
  return -1;
}

int physclient_reset_to_keyframe(physclient *c, const char *name, physclient_error *err) {
  if (!name || !*name) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "keyframe name is empty");
  Physd__V1__ResetToKeyframe m = PHYSD__V1__RESET_TO_KEYFRAME__INIT;
  m.name = (char *)name;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_RESET_TO_KEYFRAME;
  env.reset_to_keyframe = &m;
  return pc__call_ack(c, &env, err);
}

int physclient_set_joint_state(physclient *c, const physclient_joint_state_request *req,
                               physclient_error *err) {
  if (!req) return pc__fail(err, PHYSCLIENT_EINVAL, 0, "joint state request is NULL");
  /* the values are the server's to check; the message only borrows the caller's arrays */
  Physd__V1__SetJointState m = PHYSD__V1__SET_JOINT_STATE__INIT;
  m.n_joint_ids = req->ids ? req->n_ids : 0;
  m.joint_ids = (int32_t *)req->ids;
  m.n_joint_names = req->names ? req->n_names : 0;
  m.joint_names = (char **)req->names;
  m.n_qpos = req->qpos ? req->n_qpos : 0;
  m.qpos = (double *)req->qpos;
  m.n_qvel = req->qvel ? req->n_qvel : 0;
  m.qvel = (double *)req->qvel;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_SET_JOINT_STATE;
  env.set_joint_state = &m;
  return pc__call_ack(c, &env, err);
}
