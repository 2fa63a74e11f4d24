/*
 * tok_regex.h: compiling the patterns of tokenizer.json with PCRE2.
 *
 * tokenizers runs them with Oniguruma; PCRE2 with UTF and Unicode
 * properties (UCP) reads them the same way except for two escapes, which
 * are rewritten first (see tok_regex.c). The code is JIT-compiled where
 * the platform allows.
 */
#ifndef TF_TOK_REGEX_H
#define TF_TOK_REGEX_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>

/* pat[0..len) as a regex, or as a literal string when literal; NULL with
 * the error set ("regex '...' is rejected by PCRE2 at offset N: why") */
pcre2_code *tf_regex_compile(const char *pat, size_t len, int literal);

#endif
