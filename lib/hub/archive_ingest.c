/* archive_ingest.c: archives and folders into the hub cache, refusing hostile members */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "archive_ingest.h"
#include "base/err.h"
#include "hub.h"
#include "hubsum.h"

enum { M_FILE, M_LINK, M_HARD };

typedef struct {
	char *path;             /* normalised, inside the archive */
	int kind;
	char *target;           /* M_LINK, M_HARD: normalised path it names */
	char *src;              /* a folder's file to copy, NULL in archives */
	int stage;              /* staged file number, -1 while not staged */
	char sha[65];
	int to;                 /* the M_FILE a link ends at */
	int take;               /* passes the filter */
	int placed;             /* its blob is in blobs/ */
	int empty;              /* M_FILE staged with no bytes */
	int skipped;            /* M_FILE the filter cannot take: not staged */
} member;

typedef struct {
	const tf_ingest_opts *o;
	const char *name;       /* the source, for messages */
	char *stage;            /* staging folder */
	member *m;
	int nm, cap, nstaged;
	size_t strip;           /* bytes of a common top folder to drop */
	FILE *staged_log;       /* TF_TEST_STAGED: "BYTES PATH" of each staged member */
} ingest;

static char *fmt(const char *f, const char *a, const char *b)
{
	char *s = tf_malloc(strlen(f) + strlen(a) + strlen(b) + 1);

	sprintf(s, f, a, b);
	return s;
}

/* a member name safe to print */
static const char *shown(const char *s, char buf[160])
{
	size_t i;

	for (i = 0; s[i] && i < 159; i++)
		buf[i] = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

static int refuse(ingest *g, const char *what, const char *why)
{
	char b[160];

	return tf_err("refusing '%s': member '%s' %s", g->name, shown(what, b), why);
}

/*
 * Normalises a name from an archive: drops empty and "." parts. Returns 0,
 * or why it is refused: an absolute name, a ".." part, a control character
 * or backslash, or no name at all. *out is "" for the root itself.
 */
enum { N_OK, N_ABSOLUTE, N_DOTDOT, N_CHAR, N_EMPTY };

static int clean(const char *raw, char **out)
{
	char *s, *p, *tok, *save = NULL;
	size_t n = 0;

	*out = NULL;
	if (!raw || !*raw)
		return N_EMPTY;
	if (raw[0] == '/')
		return N_ABSOLUTE;
	for (const char *c = raw; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
			return N_CHAR;
	s = tf_strdup(raw);
	p = tf_malloc(strlen(raw) + 1);
	p[0] = 0;
	for (tok = strtok_r(s, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			free(s);
			free(p);
			return N_DOTDOT;
		}
		n += sprintf(p + n, "%s%s", n ? "/" : "", tok);
	}
	free(s);
	*out = p;
	return N_OK;
}

static int norm(ingest *g, const char *raw, char **out)
{
	switch (clean(raw, out)) {
	case N_OK:
		return 0;
	case N_ABSOLUTE:
		return refuse(g, raw, "is an absolute path");
	case N_DOTDOT:
		return refuse(g, raw, "climbs out with '..'");
	case N_CHAR:
		return refuse(g, raw, "has a control character or a backslash in its name");
	default:
		return tf_err("refusing '%s': a member has no usable name", g->name);
	}
}

/* resolves a symbolic link's target against the link's folder, without
 * leaving the archive */
static int link_target(ingest *g, const char *path, const char *target, char **out)
{
	char *s, *res, *tok, *save = NULL;
	size_t n;
	const char *slash = strrchr(path, '/');

	*out = NULL;
	if (!target || !*target)
		return refuse(g, path, "is a link to nothing");
	if (target[0] == '/')
		return refuse(g, path, "is a link pointing outside (an absolute target)");
	res = tf_malloc(strlen(path) + strlen(target) + 2);
	n = slash ? (size_t)(slash - path) : 0;
	memcpy(res, path, n);
	res[n] = 0;
	s = tf_strdup(target);
	for (tok = strtok_r(s, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..")) {
			char *up;

			if (!n) {
				free(s);
				free(res);
				return refuse(g, path, "is a link pointing outside the archive");
			}
			up = strrchr(res, '/');
			n = up ? (size_t)(up - res) : 0;
			res[n] = 0;
			continue;
		}
		n += sprintf(res + n, "%s%s", n ? "/" : "", tok);
	}
	free(s);
	if (!n) {
		free(res);
		return refuse(g, path, "is a link to the archive's root");
	}
	*out = res;
	return 0;
}

static member *add(ingest *g, char *path, int kind)
{
	member *m;

	if (g->nm == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->m = tf_realloc(g->m, g->cap * sizeof *g->m);
	}
	m = &g->m[g->nm++];
	memset(m, 0, sizeof *m);
	m->path = path;
	m->kind = kind;
	m->stage = -1;
	m->to = -1;
	return m;
}

static int has_git_part(const char *path)
{
	return !strcmp(path, ".git") || !strncmp(path, ".git/", 5) || strstr(path, "/.git/") ||
	       (strlen(path) > 5 && !strcmp(path + strlen(path) - 5, "/.git"));
}

/* ---- staging ---- */

static char *stage_name(ingest *g, int n)
{
	char num[24];

	snprintf(num, sizeof num, "%d", n);
	return fmt("%s/%s", g->stage, num);
}

typedef struct {
	int fd;
	uint64_t off;
	tf_sum sum;
	const char *path;
} stager;

static int stage_open(ingest *g, member *m, stager *s)
{
	char *name = stage_name(g, g->nstaged);

	s->fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (s->fd < 0) {
		tf_err("cannot create '%s':", name);
		free(name);
		return -1;
	}
	free(name);
	m->stage = g->nstaged++;
	s->off = 0;
	s->path = m->path;
	if (tf_sum_init_sha256(&s->sum)) {
		close(s->fd);
		return -1;
	}
	return 0;
}

static int stage_write(stager *s, const void *buf, size_t n)
{
	const char *b = buf;

	tf_sum_add(&s->sum, buf, n);
	while (n) {
		ssize_t w = write(s->fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return tf_err("cannot stage '%s':", s->path);
		}
		b += w;
		n -= w;
		s->off += w;
	}
	return 0;
}

/* whether size more bytes fit in the staging folder's file system, with
 * 64 MiB to spare: a small archive that expands to more (a sparse member,
 * a header that lies) is refused before it fills the disk */
static int room(ingest *g, const char *path, uint64_t size)
{
	struct statvfs v;
	char b[160];

	if (statvfs(g->stage, &v) < 0)
		return tf_err("cannot stat '%s':", g->stage);
	const uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize, spare = 64ull << 20;
	if (size > (avail > spare ? avail - spare : 0))
		return tf_err("'%s': member '%s' would take %llu bytes, and %llu are free", g->name, shown(path, b),
			      (unsigned long long)size, (unsigned long long)avail);
	return 0;
}

/* writes zeros up to offset (a sparse member's hole) */
static int stage_fill(stager *s, uint64_t to)
{
	static const char zero[4096];

	while (s->off < to) {
		size_t n = to - s->off < sizeof zero ? to - s->off : sizeof zero;

		if (stage_write(s, zero, n))
			return -1;
	}
	return 0;
}

static int stage_close(stager *s, member *m, int ok)
{
	int rc = ok ? 0 : -1;

	if (close(s->fd) && !rc)
		rc = tf_err("cannot stage '%s':", s->path);
	if (tf_sum_hex(&s->sum, m->sha) && !rc)
		rc = -1;
	return rc;
}

/* copies a folder's file into the staging folder */
static int stage_copy(ingest *g, member *m)
{
	char *buf = tf_malloc(1 << 20);
	int fd = open(m->src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ok = 1;
	stager s;
	ssize_t n;

	if (fd < 0) {
		free(buf);
		return tf_err("cannot open '%s':", m->src);
	}
	if (stage_open(g, m, &s)) {
		close(fd);
		free(buf);
		return -1;
	}
	while ((n = read(fd, buf, 1 << 20)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			tf_err("cannot read '%s':", m->src);
			ok = 0;
			break;
		}
		if (stage_write(&s, buf, n)) {
			ok = 0;
			break;
		}
	}
	close(fd);
	free(buf);
	return stage_close(&s, m, ok);
}

/* removes the staging folder and what is left in it */
static void stage_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				char *p = fmt("%s/%s", dir, e->d_name);

				unlink(p);
				free(p);
			}
		closedir(d);
	}
	rmdir(dir);
}

/* staging folders of processes that died before they could clean up */
static void sweep(const char *locks)
{
	DIR *d = opendir(locks);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "ingest.", 7))
			continue;
		pid = strtol(e->d_name + 7, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid() || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		{
			char *p = fmt("%s/%s", locks, e->d_name);

			stage_remove(p);
			free(p);
		}
	}
	closedir(d);
}

/* ---- reading an archive ---- */

/* what libarchive says went wrong; it says nothing of some truncations */
static const char *why(struct archive *a)
{
	const char *s = archive_error_string(a);

	return s ? s : "truncated or damaged";
}

/* g's source opened for reading, in the formats and filters it may use;
 * NULL with a message */
static struct archive *open_archive(ingest *g)
{
	struct archive *a = archive_read_new();
	int r;

	/* no mtree: an mtree "archive" makes libarchive read files named in it
	 * from the disk */
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_empty(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_compress(a);
	if (!strcmp(g->o->src, "-"))
		r = archive_read_open_fd(a, 0, 1 << 16);
	else
		r = archive_read_open_filename(a, g->o->src, 1 << 16);
	if (r != ARCHIVE_OK) {
		tf_err("cannot open '%s': %s", g->name, why(a));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* the data of the file member m (at path, entry e) of a, staged to its
 * place in the cache; sparse members get their holes filled */
static int copy_member(ingest *g, struct archive *a, struct archive_entry *e, member *m, const char *path)
{
	stager s;
	const void *buf;
	size_t len;
	la_int64_t off;
	char b[160];
	int r, ok = 1;
	/* only a sparse tar member has holes to fill: any other member is as
	 * long as its data, and one whose headers claim more than it holds is
	 * refused, not padded */
	const int sparse = archive_entry_sparse_count(e) > 0;
	const int sized = archive_entry_size_is_set(e);
	const uint64_t size = sized && archive_entry_size(e) > 0 ? (uint64_t)archive_entry_size(e) : 0;

	if (sized && room(g, path, size))
		return -1;
	if (stage_open(g, m, &s))
		return -1;
	while ((r = archive_read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const int bad = off < 0 || (uint64_t)off < s.off || (!sparse && (uint64_t)off != s.off) ||
				(sized && (uint64_t)off + len > size);
		if (bad || stage_fill(&s, off) || stage_write(&s, buf, len)) {
			if (bad)
				tf_err("'%s': member '%s' has blocks out of order or past its size", g->name,
				       shown(path, b));
			ok = 0;
			break;
		}
	}
	if (ok && r != ARCHIVE_EOF) {
		tf_err("cannot read member '%s' of '%s': %s", shown(path, b), g->name, why(a));
		ok = 0;
	}
	if (ok && sparse && stage_fill(&s, size))
		ok = 0;
	if (ok && sized && s.off != size) {
		tf_err("'%s': member '%s' is truncated: it holds %llu of the %llu bytes its header gives", g->name,
		       shown(path, b), (unsigned long long)s.off, (unsigned long long)size);
		ok = 0;
	}
	m->empty = !s.off;
	if (g->staged_log)
		fprintf(g->staged_log, "%llu %s\n", (unsigned long long)s.off, shown(path, b));
	return stage_close(&s, m, ok) ? -1 : 0;
}

/* whether the filter may take path once a common top folder is known: the
 * folder is decided only when the whole archive is read, so both the full
 * path and the path less its first part are asked */
static int may_take(ingest *g, const char *path)
{
	const char *slash = strchr(path, '/');

	return tf_hub_filter_match(&g->o->filter, path) ||
	       (slash && tf_hub_filter_match(&g->o->filter, slash + 1));
}

/* the regular member m (entry e) recorded without its data, which the
 * filter leaves out; a link the filter takes may still need it staged */
static void skip_member(struct archive *a, struct archive_entry *e, member *m)
{
	m->skipped = 1;
	m->empty = archive_entry_size_is_set(e) && archive_entry_size(e) == 0;
	archive_read_data_skip(a);
}

static int read_archive(ingest *g)
{
	struct archive *a = open_archive(g);
	struct archive_entry *e;
	char b[160];
	int r, rc = -1;

	if (!a)
		return -1;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *raw = archive_entry_pathname(e);
		const char *hard = archive_entry_hardlink(e);
		mode_t type = archive_entry_filetype(e);
		char *path;
		member *m;

		if (r == ARCHIVE_WARN)
			tf_warn("'%s': %s", g->name, why(a));
		if (norm(g, raw, &path))
			goto out;
		if (hard) {
			char *to;

			if (clean(hard, &to) != N_OK || !*to) {
				refuse(g, raw, "is a hard link pointing outside the archive");
				free(to);
				free(path);
				goto out;
			}
			if (has_git_part(path)) {
				free(to);
				free(path);
				archive_read_data_skip(a);
				continue;
			}
			/* cpio puts the data of linked files on one of them */
			if (!(archive_entry_size_is_set(e) && archive_entry_size(e) > 0)) {
				m = add(g, path, M_HARD);
				m->target = to;
				continue;
			}
			/* GNU cpio's newc format puts it on the last: the member
			 * this one links to came first, empty, and becomes the
			 * link to this one */
			for (int i = 0; i < g->nm; i++)
				if (g->m[i].kind == M_FILE && !strcmp(g->m[i].path, to) && g->m[i].empty) {
					g->m[i].kind = M_HARD;
					g->m[i].target = tf_strdup(path);
					break;
				}
			free(to);
			type = AE_IFREG;
		}
		if (type == AE_IFDIR || (!*path && type != AE_IFREG)) {
			free(path);
			archive_read_data_skip(a);
			continue;
		}
		if (type == AE_IFLNK) {
			char *to;

			if (link_target(g, path, archive_entry_symlink(e), &to)) {
				free(path);
				goto out;
			}
			if (has_git_part(path)) {
				free(to);
				free(path);
				continue;
			}
			m = add(g, path, M_LINK);
			m->target = to;
			continue;
		}
		if (type != AE_IFREG) {
			refuse(g, raw, type == AE_IFCHR || type == AE_IFBLK ? "is a device" :
				       type == AE_IFIFO ? "is a FIFO" :
				       type == AE_IFSOCK ? "is a socket" : "is of an unknown type");
			free(path);
			goto out;
		}
		if (!*path) {
			free(path);
			refuse(g, raw, "is a file without a name");
			goto out;
		}
		if (has_git_part(path)) {
			free(path);
			archive_read_data_skip(a);
			continue;
		}
		m = add(g, path, M_FILE);
		if (!may_take(g, path))
			skip_member(a, e, m);
		else if (copy_member(g, a, e, m, path) < 0)
			goto out;
	}
	if (r != ARCHIVE_EOF) {
		if (g->nm)
			tf_err("cannot read '%s' past its member '%s': %s", g->name, shown(g->m[g->nm - 1].path, b),
			       why(a));
		else
			tf_err("cannot read '%s': %s", g->name, why(a));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	return rc;
}

/* ---- reading a folder ---- */

static int under(const char *root, const char *path)
{
	size_t n = strlen(root);

	return !strncmp(root, path, n) && (path[n] == '/' || (n == 1 && root[0] == '/'));
}

static int walk(ingest *g, const char *root, const char *rel, int depth)
{
	char *dir = *rel ? fmt("%s/%s", root, rel) : tf_strdup(root);
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (depth > 64 || !(d = opendir(dir))) {
		tf_err("cannot read '%s':", dir);
		free(dir);
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		char *sub, *full;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = *rel ? fmt("%s/%s", rel, e->d_name) : tf_strdup(e->d_name);
		full = fmt("%s/%s", root, sub);
		if (lstat(full, &st)) {
			rc = tf_err("cannot read '%s':", full);
		} else if (!strcmp(e->d_name, ".git")) {
			/* a git checkout's history is no part of the model */
		} else if (S_ISDIR(st.st_mode)) {
			rc = walk(g, root, sub, depth + 1);
			free(sub);
			sub = NULL;
		} else if (S_ISREG(st.st_mode)) {
			if (!tf_hub_valid_path(sub))
				rc = refuse(g, sub, "has a name that cannot go into the cache");
			else {
				add(g, sub, M_FILE)->src = tf_strdup(full);
				sub = NULL;
			}
		} else if (S_ISLNK(st.st_mode)) {
			char *real = realpath(full, NULL);

			if (!real)
				rc = refuse(g, sub, "is a link that leads nowhere");
			else if (!under(root, real))
				rc = refuse(g, sub, "is a link pointing outside the folder");
			else if (stat(real, &st) || !S_ISREG(st.st_mode))
				rc = refuse(g, sub, "is a link to something other than a file");
			else if (!tf_hub_valid_path(sub))
				rc = refuse(g, sub, "has a name that cannot go into the cache");
			else {
				add(g, sub, M_FILE)->src = real;
				real = NULL;
				sub = NULL;
			}
			free(real);
		} else
			rc = refuse(g, sub, S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "is a device" :
				    S_ISFIFO(st.st_mode) ? "is a FIFO" : "is a socket");
		free(sub);
		free(full);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* ---- putting it together ---- */

static int by_path(const void *a, const void *b)
{
	return strcmp(((const member *)a)->path, ((const member *)b)->path);
}

static int find(ingest *g, const char *path)
{
	int lo = 0, hi = g->nm - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(g->m[mid].path, path);

		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* sorts members, refuses duplicates, ends every link at a file, finds a
 * common top folder */
static int settle(ingest *g)
{
	char b[160];

	if (!g->nm)
		return tf_err("'%s' holds no files", g->name);
	qsort(g->m, g->nm, sizeof *g->m, by_path);
	for (int i = 1; i < g->nm; i++)
		if (!strcmp(g->m[i].path, g->m[i - 1].path))
			return refuse(g, g->m[i].path, "appears twice");
	for (int i = 0; i < g->nm; i++) {
		int j = i, hops = 0;

		while (g->m[j].kind != M_FILE) {
			int k = find(g, g->m[j].target);

			if (k < 0 || ++hops > 40)
				return tf_err("refusing '%s': member '%s' links to '%s', which is no file "
					      "in the archive", g->name, shown(g->m[i].path, b),
					      g->m[j].target);
			j = k;
		}
		g->m[i].to = j;
	}
	/* one folder around everything (tar czf x.tar.gz model/) is dropped */
	if (!g->m[0].src) {
		const char *slash = strchr(g->m[0].path, '/');
		size_t n = slash ? (size_t)(slash - g->m[0].path) + 1 : 0;

		for (int i = 0; n && i < g->nm; i++)
			if (strncmp(g->m[i].path, g->m[0].path, n))
				n = 0;
		g->strip = n;
	}
	return 0;
}

/* the git blob hash of the sha256sum-style manifest of what is taken */
static int manifest_commit(ingest *g, char commit[65])
{
	char **lines = tf_calloc(g->nm, sizeof *lines), *text;
	size_t total = 0, off = 0;
	int n = 0;
	tf_sum sum;

	for (int i = 0; i < g->nm; i++)
		if (g->m[i].take) {
			lines[n] = fmt("%s  %s\n", g->m[g->m[i].to].sha, g->m[i].path + g->strip);
			total += strlen(lines[n++]);
		}
	/* members are in path order already, and dropping a common top folder
	 * keeps that order */
	text = tf_malloc(total + 1);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(lines[i]);

		memcpy(text + off, lines[i], len);
		off += len;
		free(lines[i]);
	}
	free(lines);
	if (tf_sum_init(&sum, "0000000000000000000000000000000000000000", total) ||
	    tf_sum_add(&sum, text, total) || tf_sum_hex(&sum, commit)) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

static int place(ingest *g, const char *repo_dir, member *f)
{
	char *blob = fmt("%s/blobs/%s", repo_dir, f->sha), *staged = stage_name(g, f->stage);
	int lock = tf_hub_lock(g->o->cache, g->o->repo, f->sha), rc = 0;

	if (lock < 0)
		rc = -1;
	else if (!tf_hub_have_blob(repo_dir, f->sha) && rename(staged, blob))
		rc = tf_err("cannot rename '%s' to '%s':", staged, blob);
	tf_hub_unlock(lock);
	free(blob);
	free(staged);
	f->placed = !rc;
	return rc;
}

/* a second reading of the archive, staging the skipped members that taken
 * links end at (marked by stage == -2); members are in path order now */
static int stage_again(ingest *g)
{
	struct archive *a = open_archive(g);
	struct archive_entry *e;
	int r, rc = -1;

	if (!a)
		return -1;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		mode_t type = archive_entry_filetype(e);
		char *path;
		int k;

		if (!archive_entry_hardlink(e) ? type != AE_IFREG :
		    !(archive_entry_size_is_set(e) && archive_entry_size(e) > 0))
			continue;
		if (clean(archive_entry_pathname(e), &path) != N_OK)
			continue;
		k = find(g, path);
		if (k >= 0 && g->m[k].kind == M_FILE && g->m[k].stage == -2 &&
		    copy_member(g, a, e, &g->m[k], path) < 0) {
			free(path);
			goto out;
		}
		free(path);
	}
	if (r != ARCHIVE_EOF) {
		tf_err("cannot read '%s' a second time: %s", g->name, why(a));
		goto out;
	}
	rc = 0;
out:
	archive_read_free(a);
	return rc;
}

/* the skipped members that taken links end at, staged: from a file by
 * reading it again, from stdin refused (it cannot be read twice) */
static int stage_link_targets(ingest *g)
{
	char b[160], c[160];
	int need = 0;

	for (int i = 0; i < g->nm; i++) {
		member *f = &g->m[g->m[i].to];

		if (!g->m[i].take || !f->skipped || f->stage != -1)
			continue;
		if (!strcmp(g->o->src, "-"))
			return tf_err("'%s': member '%s' links to '%s', which the include patterns leave out "
				      "and which was not kept while reading; pass the archive as a file, "
				      "not on stdin", g->name, shown(g->m[i].path, b), shown(f->path, c));
		f->stage = -2;
		need = 1;
	}
	if (!need)
		return 0;
	if (stage_again(g))
		return -1;
	for (int i = 0; i < g->nm; i++)
		if (g->m[i].stage == -2)
			return tf_err("'%s': member '%s' was not found when read a second time", g->name,
				      shown(g->m[i].path, b));
	return 0;
}

static int commit_all(ingest *g, const char *rev, char **snapshot)
{
	char commit[65], *repo_dir = tf_hub_repo_dir(g->o->cache, g->o->repo), *blobs;
	int rc = -1, taken = 0;

	for (int i = 0; i < g->nm; i++) {
		g->m[i].take = tf_hub_filter_match(&g->o->filter, g->m[i].path + g->strip);
		taken += g->m[i].take;
	}
	if (!taken) {
		free(repo_dir);
		return tf_err("no file of '%s' matches the include patterns", g->name);
	}
	if (stage_link_targets(g)) {
		free(repo_dir);
		return -1;
	}
	/* a folder's files are copied only when taken */
	for (int i = 0; i < g->nm; i++) {
		member *f = &g->m[g->m[i].to];

		if (g->m[i].take && f->src && f->stage < 0 && stage_copy(g, f)) {
			free(repo_dir);
			return -1;
		}
	}
	if (manifest_commit(g, commit)) {
		free(repo_dir);
		return -1;
	}
	blobs = fmt("%s/%s", repo_dir, "blobs");
	if (tf_hub_mkdirs(blobs))
		goto out;
	for (int i = 0; i < g->nm; i++) {
		member *f = &g->m[g->m[i].to];

		if (!g->m[i].take)
			continue;
		if (!f->placed && place(g, repo_dir, f))
			goto out;
		if (tf_hub_link(repo_dir, commit, g->m[i].path + g->strip, f->sha))
			goto out;
	}
	if (tf_hub_ref_write(repo_dir, rev, commit))
		goto out;
	*snapshot = tf_malloc(strlen(repo_dir) + 64);
	sprintf(*snapshot, "%s/snapshots/%s", repo_dir, commit);
	rc = 0;
out:
	free(blobs);
	free(repo_dir);
	return rc;
}

int tf_archive_ingest(const tf_ingest_opts *o, char **snapshot)
{
	const char *rev = o->rev ? o->rev : "main";
	ingest g = { .o = o, .name = !strcmp(o->src, "-") ? "<stdin>" : o->src };
	char *repo_dir, *locks, pid[32];
	struct stat st;
	int rc = -1;

	*snapshot = NULL;
	if (!tf_hub_valid_repo(o->repo))
		return tf_err("invalid repository id '%s' (want ORG/NAME)", o->repo);
	if (!tf_hub_valid_rev(rev) || tf_hub_is_commit(rev))
		return tf_err("invalid revision '%s' for an archive (want a branch or tag name)", rev);
	if (strcmp(o->src, "-") && stat(o->src, &st))
		return tf_err("cannot open '%s':", o->src);
	if (tf_hub_cache_init(o->cache))
		return -1;
	repo_dir = tf_hub_repo_dir(o->cache, o->repo);
	locks = fmt("%s/.locks/%s", o->cache, strrchr(repo_dir, '/') + 1);
	snprintf(pid, sizeof pid, "ingest.%ld", (long)getpid());
	g.stage = fmt("%s/%s", locks, pid);
	if (getenv("TF_TEST_STAGED") && !(g.staged_log = fopen(getenv("TF_TEST_STAGED"), "a"))) {
		tf_err("cannot open '%s':", getenv("TF_TEST_STAGED"));
		goto out;
	}
	if (tf_hub_mkdirs(locks))
		goto out;
	sweep(locks);
	stage_remove(g.stage);
	if (mkdir(g.stage, 0700)) {
		tf_err("cannot create '%s':", g.stage);
		goto out;
	}
	if (strcmp(o->src, "-") && S_ISDIR(st.st_mode)) {
		char *root = realpath(o->src, NULL);

		if (!root) {
			tf_err("cannot open '%s':", o->src);
			goto out;
		}
		rc = walk(&g, root, "", 0);
		free(root);
	} else
		rc = read_archive(&g);
	if (!rc)
		rc = settle(&g);
	if (!rc)
		rc = commit_all(&g, rev, snapshot);
out:
	stage_remove(g.stage);
	if (g.staged_log)
		fclose(g.staged_log);
	for (int i = 0; i < g.nm; i++) {
		free(g.m[i].path);
		free(g.m[i].target);
		free(g.m[i].src);
	}
	free(g.m);
	free(g.stage);
	free(locks);
	free(repo_dir);
	return rc;
}
