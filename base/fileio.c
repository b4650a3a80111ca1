#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first buffer when the size tells nothing (procfs files and streams report 0). */
#define FIRST_CAP 4096

int tj_read_file(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out_close;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto out_close;
	}
	if (S_ISREG(st.st_mode)) {
		if ((uintmax_t)st.st_size > max) {
			r = -E2BIG;
			goto out_close;
		}
	} else if (!(flags & TJ_READ_FILE_STREAMS) ||
	           (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))) {
		r = -EINVAL;
		goto out_close;
	} else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		/* A stream is read to its end, however long its writer takes. */
		r = -errno;
		goto out_close;
	}

	/* cap is what the buffer takes before it grows; one byte more than the size, so that the
	 * end of file is seen without growing, and at most max + 1, so that a file that grew past
	 * its limit is noticed. The buffer has one byte more for the NUL. */
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : FIRST_CAP;
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb;

			if (len > max) {
				r = -E2BIG;
				goto out_free;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				r = -ENOMEM;
				goto out_free;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	close(fd);
	return 0;

out_free:
	free(buf);
out_close:
	close(fd);
	return r;
}
