/*
 * tok_bytes.h: the byte-level alphabet of GPT-2 style BPE.
 *
 * Every byte 0..255 stands for one printable character: the printable
 * Latin-1 bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) for themselves, the other
 * 68 in order for U+0100, U+0101, ... (so ' ' is 'Ġ' U+0120, '\n' is 'Ċ').
 * Vocabulary strings are spelled in these characters; the decoder maps them
 * back to the bytes.
 */
#ifndef TF_TOK_BYTES_H
#define TF_TOK_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* the character that stands for byte b */
int32_t tf_bytelevel_char(unsigned char b);
/* the byte a character stands for, -1 if it is not in the alphabet */
int tf_bytelevel_byte(int32_t cp);
/* spells bytes s[0..n) in the alphabet as UTF-8 into out (room for 2n);
 * returns the length written */
size_t tf_bytelevel_encode(const char *s, size_t n, char *out);
/* bytes of a token string (valid UTF-8) into out (room for n); returns
 * the count, or -1 if some character is not in the alphabet */
long tf_bytelevel_decode(const char *s, size_t n, char *out);

#endif
