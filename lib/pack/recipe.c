/* recipe.c: per-module bits from a rule file or an mlx-lm mixed recipe */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "recipe.h"

static const struct { const char *name; int low, high; } builtin[] = {
	{ "mixed_2_6", 2, 6 }, { "mixed_3_4", 3, 4 }, { "mixed_3_6", 3, 6 }, { "mixed_4_6", 4, 6 },
};

static int layer_count(const json_t *config)
{
	json_t *v = json_object_get(config, "num_hidden_layers");

	if (!v)
		v = json_object_get(json_object_get(config, "text_config"), "num_hidden_layers");
	return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

int tf_recipe_load(tf_recipe *r, const char *spec, const json_t *config)
{
	char line[1024];
	FILE *f;
	int lineno = 0;

	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
		if (!strcmp(spec, builtin[i].name)) {
			r->low = builtin[i].low;
			r->high = builtin[i].high;
			r->layers = layer_count(config);
			if (r->layers < 1)
				return tf_err("recipe '%s' needs num_hidden_layers in config.json", spec);
			return 0;
		}
	f = fopen(spec, "r");
	if (!f)
		return tf_err("cannot open recipe '%s':", spec);
	while (fgets(line, sizeof line, f)) {
		char glob[1024], bits[64], *hash = strchr(line, '#');
		int group = 0, nf, b;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			tf_err("recipe '%s' line %d: line too long", spec, lineno);
			goto fail;
		}
		if (hash)
			*hash = 0;
		nf = sscanf(line, "%1023s %63s %d", glob, bits, &group);
		if (nf <= 0)
			continue;
		if (nf < 2) {
			tf_err("recipe '%s' line %d: expected 'GLOB BITS [GROUP]'", spec, lineno);
			goto fail;
		}
		if (!strcmp(bits, "keep")) {
			b = 0;
		} else {
			char *end;
			long v = strtol(bits, &end, 10);
			if (*end || v < 2 || v > 8 || v == 7) {
				tf_err("recipe '%s' line %d: bits '%s' not supported (2, 3, 4, 5, 6, 8 or keep)", spec,
				       lineno, bits);
				goto fail;
			}
			b = v;
		}
		if (nf == 3 && group != 32 && group != 64 && group != 128) {
			tf_err("recipe '%s' line %d: group %d not supported (32, 64 or 128)", spec, lineno, group);
			goto fail;
		}
		r->rule = tf_realloc(r->rule, (r->n + 1) * sizeof *r->rule);
		r->rule[r->n++] = (tf_recipe_rule){ tf_strdup(glob), b, nf == 3 ? group : 0, lineno, 0 };
	}
	if (ferror(f)) {
		tf_err("cannot read recipe '%s':", spec);
		goto fail;
	}
	fclose(f);
	if (!r->n)
		return tf_err("recipe '%s' has no rules", spec);
	return 0;
fail:
	fclose(f);
	tf_recipe_free(r);
	return -1;
}

/* mlx-lm's mixed_quant_predicate in normalized names: the layer index is
 * the number after "layers." (0 for modules outside the layers) */
static int mixed_bits(const tf_recipe *r, const char *m)
{
	int L = r->layers, i = 0, more;

	if (!strncmp(m, "layers.", 7))
		i = atoi(m + 7);
	more = i < L / 8 || i >= 7 * L / 8 || (i - L / 8) % 3 == 2;
	if (strstr(m, "v_proj") && more)
		return r->high;
	if (strstr(m, "down_proj") && more)
		return r->high;
	if (strstr(m, "lm_head"))
		return r->high;
	return r->low;
}

int tf_recipe_bits(tf_recipe *r, const char *module, int *group)
{
	*group = 0;
	if (r->high)
		return mixed_bits(r, module);
	for (int i = 0; i < r->n; i++)
		if (!fnmatch(r->rule[i].glob, module, 0)) {
			r->rule[i].hits++;
			*group = r->rule[i].group;
			return r->rule[i].bits;
		}
	return -1;
}

int tf_recipe_check_used(const tf_recipe *r)
{
	for (int i = 0; i < r->n; i++)
		if (!r->rule[i].hits)
			return tf_err("recipe line %d: '%s' matches no module of the checkpoint (or only ones "
				      "an earlier rule took)", r->rule[i].line, r->rule[i].glob);
	return 0;
}

void tf_recipe_free(tf_recipe *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->rule[i].glob);
	free(r->rule);
	memset(r, 0, sizeof *r);
}
