/*
 * geometry.h: the published Qwen3.5 text geometries by name, for models
 * of random weights (tf-pack --synth, tf-bench --synth).
 */
#ifndef TF_GEOMETRY_H
#define TF_GEOMETRY_H

#include <jansson.h>

/* the names, for messages */
#define TF_GEOMETRY_NAMES "qwen3.5-0.8b, -2b, -4b, -9b, -27b"

/* the config.json of geometry name (a new reference), or NULL with a
 * message */
json_t *tf_geometry_config(const char *name);

#endif
