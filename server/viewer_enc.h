/* viewer_enc.h - what the viewer (viewer.c) sends, as bytes: the JSON messages of the Foxglove
 * channels it advertises (foxglove.FrameTransforms, foxglove.SceneUpdate), their JSON schemas
 * and the FileDescriptorSet of physd's StateFrame channel.
 *
 * The JSON schemas list only the fields physd sends (Foxglove's published schemas are not
 * packaged for Debian; the field names and meanings follow them). All functions run on the loop
 * thread; they are reentrant and keep no pointer to their arguments.
 */
#ifndef PHYSD_VIEWER_ENC_H
#define PHYSD_VIEWER_ENC_H

#include <stddef.h>
#include <stdint.h>

#include "scene_snap.h"
#include "statebuf.h"

/* A growable byte buffer. Reused between messages, so it stops allocating once it has grown
 * to the largest message. `oom` is set (and further appends ignored) when it cannot grow. */
typedef struct vbuf {
  char *p;
  size_t len, cap;
  int oom;
} vbuf;

void vb_reset(vbuf *b);
void vb_free(vbuf *b);
void vb_put(vbuf *b, const char *s, size_t n);
void vb_printf(vbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Frame id of body `id` ("body/<id>"); world geoms and the transforms' parent use "world". */
#define VIEWER_WORLD_FRAME "world"

/* foxglove.FrameTransforms (JSON) with every body's pose (body frame, as GetState reports it)
 * relative to "world", stamped with the snapshot's sim time. Returns 0, or -1 out of memory. */
int venc_transforms(vbuf *b, const state_snap *s);

/* foxglove.SceneUpdate (JSON): a deletion of every entity, then one entity per body that has
 * geoms (frame "body/<id>", frame_locked) and one for the world geoms (frame "world"), each geom
 * a primitive: sphere, box (cube), cylinder, capsule (a cylinder and two spheres), ellipsoid (a
 * scaled sphere), plane (a thin cube; 20 m square when the file gives no size), mesh (its
 * collision hull as a triangle list). Geoms not drawn (a mesh whose hull could not be read, a
 * kind with no primitive) are counted in *skipped (nullable). Stamped `t_ns`. 0, or -1 out of
 * memory. */
int venc_scene(vbuf *b, const scene_snap *sc, uint64_t t_ns, int *skipped);

/* viewer_contacts.c: foxglove.SceneUpdate (JSON) with one entity, "contacts" (frame "world";
 * each message replaces the last), holding an arrow per contact of the snapshot (none when it
 * has no contacts captured): from the contact point along the force on body a (impulse /
 * timestep; along the normal when that is zero), 1 cm per newton, 2 cm to 1 m long, red.
 * Stamped with the snapshot's sim time. 0, or -1 out of memory. */
int venc_contacts(vbuf *b, const state_snap *s, uint64_t timestep_ns);

/* The JSON schemas (static strings) of the three Foxglove channels. */
extern const char venc_schema_transforms[];
extern const char venc_schema_scene[];
extern const char venc_schema_contacts[];

/* The serialized FileDescriptorSet of proto/physd.proto (generated at build time by protoc). */
extern const unsigned char physd_descriptor_set[];
extern const size_t physd_descriptor_set_len;

#endif
