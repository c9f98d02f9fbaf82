// SPDX-License-Identifier: GPL-2.0
/*
 * collx: proofs that a connection's two ends belong to the same comm.
 *
 * Every rank of a comm gets the same random secret from the job's own
 * bootstrap.  It never travels on the fabric: a connection request names
 * the comm by a lookup id derived from it (HMAC(secret, "lookup" | key |
 * nranks), so a local user cannot claim another job's id without its
 * secret), and each side proves knowledge of the secret with an HMAC over
 * both sides' fresh nonces and the ranks, so a recorded exchange cannot be
 * replayed.  Comparisons are constant-time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <crypto/hash.h>
#include <linux/err.h>

#include "collx_loc.h"
#include "wire.h"

/**
 * collx_auth_alloc() - an HMAC-SHA256 keyed with a comm's secret
 * @secret: 32 bytes
 *
 * Context: process context.
 * Return: the transform, or an ERR_PTR().
 */
struct crypto_shash *collx_auth_alloc(const u8 *secret)
{
	struct crypto_shash *tfm;
	int ret;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	ret = crypto_shash_setkey(tfm, secret, 32);
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

/**
 * collx_auth_free() - free what collx_auth_alloc() made
 * @tfm: the transform, or NULL
 *
 * Context: process context.
 */
void collx_auth_free(struct crypto_shash *tfm)
{
	if (!IS_ERR_OR_NULL(tfm))
		crypto_free_shash(tfm);
}

static int collx_auth_mac(struct crypto_shash *tfm, const char *label,
			  const void *a, size_t alen, const void *b,
			  size_t blen, u8 *out)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	int ret;

	desc->tfm = tfm;
	ret = crypto_shash_init(desc);
	if (!ret)
		ret = crypto_shash_update(desc, label, strlen(label) + 1);
	if (!ret)
		ret = crypto_shash_update(desc, a, alen);
	if (!ret && blen)
		ret = crypto_shash_update(desc, b, blen);
	if (!ret)
		ret = crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return ret;
}

/**
 * collx_auth_lookup() - the id connection requests name a comm by
 * @tfm: the comm's HMAC
 * @key: the comm_key user space gave
 * @nranks: ranks in the comm
 * @lookup: out
 *
 * Context: process context.
 * Return: 0 or a negative errno of the crypto API.
 */
int collx_auth_lookup(struct crypto_shash *tfm, u64 key, u32 nranks,
		      u64 *lookup)
{
	struct {
		__be64 key;
		__be32 nranks;
	} __packed in = { cpu_to_be64(key), cpu_to_be32(nranks) };
	u8 mac[32];
	int ret;

	ret = collx_auth_mac(tfm, "collx lookup", &in, sizeof(in), NULL, 0,
			     mac);
	if (ret)
		return ret;
	memcpy(lookup, mac, sizeof(*lookup));
	/* Never 0: that is "no comm". */
	*lookup |= 1;
	memzero_explicit(mac, sizeof(mac));
	return 0;
}

/**
 * collx_auth_proof() - one side's proof for one connection
 * @tfm: the comm's HMAC
 * @acceptor: true for the accepting side's proof, false for the connecting
 *	side's (different labels: one cannot stand for the other)
 * @active_rank: the connecting (lower) rank
 * @passive_rank: the accepting rank
 * @nonce_a: the connecting side's nonce
 * @nonce_p: the accepting side's nonce
 * @proof: out, COLLX_WIRE_PROOF bytes
 *
 * Context: any that may use the crypto API synchronously (process
 * context, or a CQ's workqueue).
 * Return: 0 or a negative errno of the crypto API.
 */
int collx_auth_proof(struct crypto_shash *tfm, bool acceptor, u32 active_rank,
		     u32 passive_rank, const u8 *nonce_a, const u8 *nonce_p,
		     u8 *proof)
{
	struct {
		__be32 active;
		__be32 passive;
		u8 na[COLLX_WIRE_NONCE];
		u8 np[COLLX_WIRE_NONCE];
	} __packed in;

	in.active = cpu_to_be32(active_rank);
	in.passive = cpu_to_be32(passive_rank);
	memcpy(in.na, nonce_a, sizeof(in.na));
	memcpy(in.np, nonce_p, sizeof(in.np));
	return collx_auth_mac(tfm, acceptor ? "collx acceptor" :
			      "collx connector", &in, sizeof(in), NULL, 0,
			      proof);
}

/**
 * collx_auth_check() - is @proof the right one
 * @tfm: the comm's HMAC
 * @acceptor: whose proof it is (as collx_auth_proof())
 * @active_rank: the connecting rank
 * @passive_rank: the accepting rank
 * @nonce_a: the connecting side's nonce
 * @nonce_p: the accepting side's nonce
 * @proof: the proof received
 *
 * Context: as collx_auth_proof().
 * Return: true if it matches.
 */
bool collx_auth_check(struct crypto_shash *tfm, bool acceptor, u32 active_rank,
		      u32 passive_rank, const u8 *nonce_a, const u8 *nonce_p,
		      const u8 *proof)
{
	u8 want[COLLX_WIRE_PROOF];
	bool ok;

	if (collx_auth_proof(tfm, acceptor, active_rank, passive_rank, nonce_a,
			     nonce_p, want))
		return false;
	ok = !crypto_memneq(want, proof, sizeof(want));
	memzero_explicit(want, sizeof(want));
	return ok;
}
