/*
 * tok_chat.h: ChatML, the turn format of the Qwen3.5 models' chat
 * template: one user turn, then the assistant's turn opened (no system
 * turn, no thinking block):
 *
 *   <|im_start|>user\nTEXT<|im_end|>\n<|im_start|>assistant\n
 */
#ifndef TF_TOK_CHAT_H
#define TF_TOK_CHAT_H

#include "tok.h"

/* whether t has ChatML's <|im_start|> and <|im_end|> tokens */
int tf_tok_has_chat(const tf_tok *t);
/* appends the ids of text[0..len) as a user turn, the assistant's turn
 * opened, to out */
int tf_tok_encode_chat(tf_tok *t, const char *text, size_t len, tf_seq *out);

#endif
