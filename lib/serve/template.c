/* template.c: the chat template a model folder ships (template.h) */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "template.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap)
			s = tf_realloc(s, cap = (n + 4096 + 1) * 2);
		got = fread(s + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	s[n] = 0;
	return s;
}

char *tf_chat_template_of(const char *model)
{
	struct stat st;
	char path[4096];

	if (stat(model, &st) < 0 || !S_ISDIR(st.st_mode))
		return NULL;
	snprintf(path, sizeof path, "%s/chat_template.jinja", model);
	char *t = slurp(path);
	if (t)
		return t;
	snprintf(path, sizeof path, "%s/tokenizer_config.json", model);
	json_t *o = json_load_file(path, 0, NULL);
	const json_t *ct = json_object_get(o, "chat_template");
	if (json_is_string(ct))
		t = tf_strdup(json_string_value(ct));
	/* a list of named templates: the default one */
	if (json_is_array(ct)) {
		size_t i;
		json_t *x;
		json_array_foreach(ct, i, x)
			if (!strcmp(json_string_value(json_object_get(x, "name")) ?: "", "default") &&
			    json_is_string(json_object_get(x, "template")))
				t = tf_strdup(json_string_value(json_object_get(x, "template")));
	}
	json_decref(o);
	return t;
}
