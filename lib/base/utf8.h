/*
 * utf8.h: the few UTF-8 facts the tokenizer needs without a Unicode table.
 *
 * Valid means RFC 3629: shortest form, no surrogates, nothing past U+10FFFF;
 * the same rule Python and Rust strings obey, so text tf-tok accepts is text
 * Hugging Face tokenizers accepts.
 */
#ifndef TF_UTF8_H
#define TF_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* length of the valid prefix of s; equals n when all of s is valid */
size_t tf_utf8_valid(const char *s, size_t n);
/* decodes the character at s (valid UTF-8, n > 0); returns its byte length */
int tf_utf8_next(const char *s, size_t n, int32_t *cp);
/* writes cp as UTF-8 into out (room for 4); returns the byte count */
int tf_utf8_put(char *out, int32_t cp);
/* bytes at the end of s[0..n) that start a character whose remaining bytes
 * have not arrived yet (0 to 3): what a stream must hold back */
size_t tf_utf8_pending(const char *s, size_t n);

#endif
