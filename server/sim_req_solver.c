/* sim_req_solver.c - the SetSolver request (protocol 1.2): change the contact solver, its
 * iteration cap, its tolerance or (1.6) its options between steps. A row of the request table (requests.c); runs
 * on the simulation thread at a step boundary like every request that changes the world, so
 * it never lands inside a step. Checked whole: a bad part is INVALID_ARGUMENT and nothing
 * changes. Any client may send it (as LoadWorld, Reset or SetMode: physd has no world owner). */
#include <stdio.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "textesc.h"

void sim_req_set_solver(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  const Physd__V1__SetSolver *r = m->set_solver;
  perr e;
  solver_choice c;
  if (solver_choice_from_request(&c, r->name, r->has_max_iterations, r->max_iterations,
                                 r->has_tolerance, r->tolerance, &e) ||
      solver_choice_add_options(&c, r->options, r->n_options, &e) ||
      world_set_solver(&s->wc, &c, &e)) {
    char shown[600];
    log_info("solver change refused", "session=%llu reason=\"%s\"",
             (unsigned long long)to->session, text_escape(shown, sizeof shown, e.msg));
    sim_reply_perr(s, to, &e);
    return;
  }
  solver_in_use siu;
  world_solver_in_use(&s->wc, &siu);
  const Physd__V1__SolverInUse *su = &siu.msg;
  char opts[1024] = "";
  size_t len = 0;
  for (size_t i = 0; i < su->n_options && len < sizeof opts; i++)
    len += (size_t)snprintf(opts + len, sizeof opts - len, "%s%s=%g", i ? "," : "",
                            su->options[i]->name, su->options[i]->value);
  log_info("solver set", "session=%llu solver=%s max_iterations=%u tolerance=%g options=%s "
           "step=%llu", (unsigned long long)to->session, su->name, su->max_iterations,
           su->tolerance, opts, (unsigned long long)phys_world_step_index(s->wc.w));
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_SOLVER_IN_USE;
  env.solver_in_use = &siu.msg;
  sim_reply_env(s, to, &env, 0, 0);
}
