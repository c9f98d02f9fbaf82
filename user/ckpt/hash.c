// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Chunk hashes and shards spread over regions.  The hash is XXH3-64 from
 * Debian's libxxhash: 64 bits because incremental archives take an equal
 * hash for an unchanged chunk (a 32-bit CRC would miss one change in 2^32
 * chunks), and fast enough to run inside the training pause.
 */
#include <string.h>
/* XXH3_state_t on the stack */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "ckpt_int.h"

uint64_t ckpt_hash(const void *buf, size_t len)
{
	return XXH3_64bits(buf, len);
}

uint64_t ckpt_regions_bytes(struct ckpt_iov v)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < v.n; i++)
		n += v.r[i].bytes;
	return n;
}

/* Call @fn on each piece of [@off, @off + @len). */
#define FOR_PIECES(v, off, len, p, plen, pos, body) do {			\
	uint64_t _o = (off), _base = 0;					\
	size_t _left = (len);						\
	int _i;								\
	for (_i = 0; _i < (v).n && _left; _i++) {			\
		uint64_t _rb = (v).r[_i].bytes;				\
		if (_o >= _base + _rb) { _base += _rb; continue; }	\
		{							\
			uint64_t _in = _o - _base;			\
			size_t plen = _rb - _in < _left ? _rb - _in : _left; \
			uint8_t *p = (uint8_t *)(v).r[_i].buf + _in;	\
			size_t pos = (len) - _left;			\
			body;						\
			_o += plen; _left -= plen;			\
		}							\
		_base += _rb;						\
	}								\
} while (0)

uint64_t ckpt_hash_regions(struct ckpt_iov v, uint64_t off, size_t len)
{
	XXH3_state_t st;

	XXH3_64bits_reset(&st);
	FOR_PIECES(v, off, len, p, plen, pos, { (void)pos; XXH3_64bits_update(&st, p, plen); });
	return XXH3_64bits_digest(&st);
}

void ckpt_copy_from_regions(struct ckpt_iov v, uint64_t off, void *dst, size_t len)
{
	FOR_PIECES(v, off, len, p, plen, pos, { memcpy((uint8_t *)dst + pos, p, plen); });
}

void ckpt_copy_to_regions(struct ckpt_iov v, uint64_t off, const void *src, size_t len)
{
	FOR_PIECES(v, off, len, p, plen, pos, { memcpy(p, (const uint8_t *)src + pos, plen); });
}

int ckpt_regions_iov(struct ckpt_iov v, uint64_t off, size_t len, struct iovec *iov, int max)
{
	int n = 0;

	FOR_PIECES(v, off, len, p, plen, pos, {
		(void)pos;
		if (n < max) {
			iov[n].iov_base = p;
			iov[n].iov_len = plen;
		}
		n++;
	});
	return n;
}
