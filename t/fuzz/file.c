/* file.c: fuzz inputs as files, for readers that open paths */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

int fuzz_file(const uint8_t *data, size_t size, char path[64])
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}
