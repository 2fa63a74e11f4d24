/* map.c: read-only file mappings */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "map.h"

tf_map *tf_map_open(const char *path)
{
	struct stat st;
	tf_map *m;
	void *p = NULL;
	/* O_NONBLOCK: a FIFO in a model's place opens at once, and is refused
	 * below, where a plain open would wait for a writer forever */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return tf_err("cannot open '%s':", path), NULL;
	if (fstat(fd, &st) < 0) {
		tf_err("cannot stat '%s':", path);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		tf_err("'%s' is not a regular file", path);
		close(fd);
		return NULL;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			tf_err("cannot map '%s':", path);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	m = tf_calloc(1, sizeof *m);
	m->path = tf_strdup(path);
	m->data = p;
	m->size = st.st_size;
	return m;
}

void tf_map_close(tf_map *m)
{
	if (!m)
		return;
	if (m->size)
		munmap((void *)m->data, m->size);
	free(m->path);
	free(m);
}
