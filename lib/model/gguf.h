/*
 * gguf.h: llama.cpp's GGUF container, read-only, version 2 and 3.
 *
 *   1. magic "GGUF" (4 bytes)
 *   2. version u32 (2 or 3; 1 had 32-bit counts and is refused)
 *   3. tensor count u64, 4. metadata count u64
 *   5. metadata: key (string), value type u32, value; a string is a u64
 *      length and that many bytes; an array is an element type u32, a u64
 *      count and the elements (arrays of arrays are refused)
 *   6. tensor infos: name (string), n_dims u32 (1..4), ne[n_dims] u64
 *      (ne[0] the innermost: a matrix is ne = [cols, rows]), type u32,
 *      offset u64 from the data start, a multiple of the alignment
 *   7. padding to general.alignment (u32, a power of two, default 32),
 *      then the tensor data
 *
 * All little-endian. Every count, length and offset is checked against the
 * file before it is used, so a hostile file fails with its place named.
 * A model may be split over files NAME-00001-of-0000N.gguf (keys split.no,
 * split.count); the metadata is the first file's, the tensors all files'.
 */
#ifndef TF_GGUF_H
#define TF_GGUF_H

#include <stdint.h>

#include "base/map.h"

/* metadata value types */
enum {
	TF_GGUF_U8, TF_GGUF_I8, TF_GGUF_U16, TF_GGUF_I16, TF_GGUF_U32, TF_GGUF_I32, TF_GGUF_F32,
	TF_GGUF_BOOL, TF_GGUF_STRING, TF_GGUF_ARRAY, TF_GGUF_U64, TF_GGUF_I64, TF_GGUF_F64,
	TF_GGUF_NTYPES
};

/* tensor types (ggml_type) that have a name here */
enum {
	TF_GGML_F32 = 0, TF_GGML_F16 = 1, TF_GGML_Q4_0 = 2, TF_GGML_Q4_1 = 3, TF_GGML_Q5_0 = 6,
	TF_GGML_Q5_1 = 7, TF_GGML_Q8_0 = 8, TF_GGML_Q8_1 = 9, TF_GGML_Q2_K = 10, TF_GGML_Q3_K = 11,
	TF_GGML_Q4_K = 12, TF_GGML_Q5_K = 13, TF_GGML_Q6_K = 14, TF_GGML_Q8_K = 15, TF_GGML_IQ2_XXS = 16,
	TF_GGML_IQ2_XS = 17, TF_GGML_IQ3_XXS = 18, TF_GGML_IQ1_S = 19, TF_GGML_IQ4_NL = 20,
	TF_GGML_IQ3_S = 21, TF_GGML_IQ2_S = 22, TF_GGML_IQ4_XS = 23, TF_GGML_I8 = 24, TF_GGML_I16 = 25,
	TF_GGML_I32 = 26, TF_GGML_I64 = 27, TF_GGML_F64 = 28, TF_GGML_IQ1_M = 29, TF_GGML_BF16 = 30,
	TF_GGML_TQ1_0 = 34, TF_GGML_TQ2_0 = 35, TF_GGML_MXFP4 = 39, TF_GGML_NVFP4 = 40, TF_GGML_Q1_0 = 41,
};

typedef struct {
	const char *p;          /* into the mapping; not NUL-terminated */
	uint64_t n;
} tf_gguf_str;

typedef struct {
	tf_gguf_str key;
	int type;               /* TF_GGUF_* */
	int etype;              /* arrays: the element type */
	uint64_t count;         /* arrays: the element count */
	const unsigned char *v; /* the value (arrays: the first element) */
	uint64_t vbytes;        /* bytes of the value */
} tf_gguf_kv;

typedef struct {
	char *name;
	int type;               /* ggml type */
	int ndim;
	int64_t ne[4];          /* ne[0] innermost */
	uint64_t offset;        /* from its file's data start */
	const unsigned char *data;
	uint64_t bytes;
	int file;               /* which file of a split set */
} tf_gguf_tensor;

typedef struct {
	char *path;             /* as given, for messages */
	tf_map **maps;          /* (nfiles) */
	int nfiles;
	tf_gguf_kv *kv;         /* (nkv) the first file's metadata */
	int64_t nkv;
	tf_gguf_tensor *t;      /* (nt) in file order */
	int64_t nt;
} tf_gguf;

/* 1 when the file starts with "GGUF", 0 when not, -1 when unreadable */
int tf_gguf_is(const char *path);
/* the GGUF file of a folder that holds one GGUF or one split set (its
 * first part); NULL with *err 0 when it holds none, NULL with *err 1 and a
 * message when it holds several that are not one set */
char *tf_gguf_in_dir(const char *dir, int *err);
/* opens and checks a GGUF file (and the rest of its split set); NULL with
 * a message */
tf_gguf *tf_gguf_open(const char *path);
void tf_gguf_close(tf_gguf *g);

const tf_gguf_kv *tf_gguf_find(const tf_gguf *g, const char *key);
/* an integer value of any integer type (or bool) into *out; 0 when
 * absent (out untouched), 1 when read, -1 with a message when of another type */
int tf_gguf_int(const tf_gguf *g, const char *key, int64_t *out);
int tf_gguf_float(const tf_gguf *g, const char *key, double *out);
/* a string value, NUL-terminated and allocated; NULL when absent, -1 error via *bad */
char *tf_gguf_string(const tf_gguf *g, const char *key, int *bad);
/* element i of a numeric array as int64 / double (no bounds checks: i < count) */
int64_t tf_gguf_arr_int(const tf_gguf_kv *kv, uint64_t i);
/* the strings of a string array walked in order: *at starts at 0 */
tf_gguf_str tf_gguf_arr_next_str(const tf_gguf_kv *kv, uint64_t *at);
const tf_gguf_tensor *tf_gguf_tensor_find(const tf_gguf *g, const char *name);

/* gguf_blocks.c: a type's name ("Q8_0"), elements a block and bytes a
 * block; block 0 when the type is unknown */
const char *tf_ggml_type_name(int type);
int tf_ggml_block(int type, int *bytes);

#endif
