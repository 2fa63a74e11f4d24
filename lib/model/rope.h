/*
 * rope.h: the rotary embedding's frequencies, as config.json's
 * rope_parameters (or rope_scaling) asks for them.
 *
 * Qwen3.5 writes rope_type "default" with an mrope_section: on text alone
 * the three position grids are one, so multimodal rope is plain 1-D rope.
 * "yarn" stretches the context: its inverse frequencies blend the plain ones
 * with ones `factor` times slower along a ramp between the dimensions that
 * turn beta_fast and beta_slow times in the original context, and cos and
 * sin are scaled by an attention factor (0.1 ln(factor) + 1 unless given),
 * as transformers' _compute_yarn_parameters makes them, in fp32. Any other
 * rope_type is refused: read and ignored, it would give wrong logits.
 */
#ifndef TF_ROPE_H
#define TF_ROPE_H

#include <jansson.h>

enum { TF_ROPE_DEFAULT, TF_ROPE_YARN };

typedef struct {
	int type;               /* TF_ROPE_DEFAULT (also mrope) or TF_ROPE_YARN */
	float theta;            /* rope_theta */
	int rot;                /* Dr: rotated dims of a head */
	float *inv;             /* (rot / 2) inverse frequency of pair j (j, j + rot/2) */
	float scale;            /* cos and sin are multiplied by it: 1 but for yarn */
	/* yarn as read (the figures the table was made from) */
	double factor;
	int orig_ctx;           /* original_max_position_embeddings */
	double beta_fast, beta_slow;
	int truncate;
} tf_rope_table;

/*
 * Fills r from the rope parameters rp (rope_parameters or rope_scaling; may
 * be NULL) for theta (as config.json gives it, double: yarn's correction
 * range is taken in double as transformers takes it), `rot` rotated dims
 * and the model's max_position_embeddings; -1 with a message naming the
 * field for a type it does not know or a bad yarn figure.
 */
int tf_rope_parse(json_t *rp, double theta, int rot, int max_pos, tf_rope_table *r);
/* the plain table: inv[j] = 1 / theta^(2j/rot) in fp32 */
void tf_rope_default(tf_rope_table *r, float theta, int rot);
/* the yarn table from its figures; attn < 0: the default attention factor */
int tf_rope_yarn(tf_rope_table *r, double theta, int rot, double factor, int orig_ctx, double beta_fast,
		 double beta_slow, double attn, int truncate);
void tf_rope_free(tf_rope_table *r);

#endif
