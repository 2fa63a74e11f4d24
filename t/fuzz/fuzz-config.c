/* fuzz-config.c: config.json as tf_config_parse reads it */
#include <jansson.h>

#include "fuzz.h"
#include "model/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *cfg = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	tf_config c;

	if (cfg && tf_config_parse(cfg, NULL, &c) == 0)
		tf_config_free(&c);
	json_decref(cfg);
	return 0;
}
