// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) for the
 * authenticated rendezvous.  The library links no crypto library, and the
 * rendezvous needs only these: a few hashes per rank per init, so this is
 * written for clarity, not speed.  Every buffer that held key material is
 * wiped before it is given back.
 */
#include <string.h>

#include "collx_int.h"

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* One 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void sha256_block(uint32_t h[8], const uint8_t *blk)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(blk + 4 * i);
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3];
	e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
		     ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
		t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		hh = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d;
	h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
	explicit_bzero(w, sizeof(w));
}

void collx_sha256_init(struct collx_sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->n = 0;
}

void collx_sha256_update(struct collx_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->len += len;
	while (len) {
		size_t take = sizeof(s->buf) - s->n;

		if (take > len)
			take = len;
		memcpy(s->buf + s->n, p, take);
		s->n += take;
		p += take;
		len -= take;
		if (s->n == sizeof(s->buf)) {
			sha256_block(s->h, s->buf);
			s->n = 0;
		}
	}
}

/* Pad with 0x80, zeros and the bit length (5.1.1); wipes the state. */
void collx_sha256_final(struct collx_sha256 *s, uint8_t out[COLLX_SHA256_BYTES])
{
	uint64_t bits = s->len * 8;
	int i;

	s->buf[s->n++] = 0x80;
	if (s->n > 56) {
		memset(s->buf + s->n, 0, sizeof(s->buf) - s->n);
		sha256_block(s->h, s->buf);
		s->n = 0;
	}
	memset(s->buf + s->n, 0, 56 - s->n);
	store_be32(s->buf + 56, (uint32_t)(bits >> 32));
	store_be32(s->buf + 60, (uint32_t)bits);
	sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++)
		store_be32(out + 4 * i, s->h[i]);
	explicit_bzero(s, sizeof(*s));
}

void collx_sha256(const void *data, size_t len, uint8_t out[COLLX_SHA256_BYTES])
{
	struct collx_sha256 s;

	collx_sha256_init(&s);
	collx_sha256_update(&s, data, len);
	collx_sha256_final(&s, out);
}

/* ---- HMAC (RFC 2104): H(K ^ opad || H(K ^ ipad || m)) ---- */

void collx_hmac_init(struct collx_hmac *h, const void *key, size_t keylen)
{
	uint8_t k[64], pad[64];
	size_t i;

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k))		/* a long key is hashed first */
		collx_sha256(key, keylen, k);
	else
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	collx_sha256_init(&h->in);
	collx_sha256_update(&h->in, pad, sizeof(pad));
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	collx_sha256_init(&h->out);
	collx_sha256_update(&h->out, pad, sizeof(pad));
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
}

void collx_hmac_update(struct collx_hmac *h, const void *data, size_t len)
{
	collx_sha256_update(&h->in, data, len);
}

void collx_hmac_final(struct collx_hmac *h, uint8_t out[COLLX_SHA256_BYTES])
{
	uint8_t inner[COLLX_SHA256_BYTES];

	collx_sha256_final(&h->in, inner);
	collx_sha256_update(&h->out, inner, sizeof(inner));
	collx_sha256_final(&h->out, out);
	explicit_bzero(inner, sizeof(inner));
}

void collx_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
		       uint8_t out[COLLX_SHA256_BYTES])
{
	struct collx_hmac h;

	collx_hmac_init(&h, key, keylen);
	collx_hmac_update(&h, data, len);
	collx_hmac_final(&h, out);
}

/* Time independent of where the first difference is: a MAC check must not
 * tell a forger how many leading bytes were right. */
bool collx_mac_equal(const void *a, const void *b, size_t len)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < len; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
