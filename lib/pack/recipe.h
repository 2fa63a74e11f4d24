/*
 * recipe.h: which bits each module gets when tf-pack quantizes.
 *
 * A recipe file has one rule a line, "GLOB BITS [GROUP]", '#' starts a
 * comment. GLOB is an fnmatch(3) pattern over normalized module names
 * ("lm_head", "embed_tokens", "layers.3.mlp.down_proj"; '*' crosses dots),
 * BITS is 2..8 or "keep", GROUP 32, 64 or 128 (default: --group). The first
 * rule that matches wins; a module no rule matches gets --bits.
 *
 * The names mixed_2_6, mixed_3_4, mixed_3_6 and mixed_4_6 select mlx-lm's
 * mixed recipes instead of a file: the high bits for v_proj and down_proj of
 * layers i < L/8, i >= 7L/8 or (i - L/8) % 3 == 2, and for lm_head; the low
 * bits for every other module.
 */
#ifndef TF_RECIPE_H
#define TF_RECIPE_H

#include <jansson.h>

typedef struct {
	char *glob;
	int bits;               /* 2..8, or 0 to keep */
	int group;              /* 0: the default group */
	int line;               /* of the recipe file */
	long hits;              /* modules it gave bits to */
} tf_recipe_rule;

typedef struct {
	tf_recipe_rule *rule;   /* (n) in file order */
	int n;
	int low, high, layers;  /* a built-in mixed recipe when high > 0 */
} tf_recipe;

/* spec: a built-in name or a file; config gives the layer count */
int tf_recipe_load(tf_recipe *r, const char *spec, const json_t *config);
/* bits for a module (0 keep) and its group (0 default); -1 when no rule matches */
int tf_recipe_bits(tf_recipe *r, const char *module, int *group);
/* 0 once every rule of a file gave some module its bits, else -1 with an error
 * naming the first that matched none (a typo would change no bits at all) */
int tf_recipe_check_used(const tf_recipe *r);
void tf_recipe_free(tf_recipe *r);

#endif
