/* map.h: a whole file mapped read-only */
#ifndef TF_MAP_H
#define TF_MAP_H

#include <stddef.h>

struct tf_map {
	char *path;
	const void *data;
	size_t size;
};
typedef struct tf_map tf_map;

tf_map *tf_map_open(const char *path);
void tf_map_close(tf_map *m);

#endif
