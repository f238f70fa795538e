#!/usr/bin/env python3
"""Derive the constants used by sm4-simd's S-box implementations.

SM4's S-box is affine-equivalent to inversion in GF(2^8) mod
f(x) = x^8+x^7+x^6+x^5+x^4+x^2+1 (0x1F5):

    S(x) = A * inv(A*x + 0xD3) + 0xD3,   A = circulant built from row 0xA7

Any two representations of GF(2^8) are linearly isomorphic, so inversion in
the SM4 field can be replaced by inversion in
  * the AES field (reachable through `aesenclast`), or
  * a GF((2^4)^2) tower field (cheap as a bitsliced Boolean circuit).
This script finds the isomorphisms, folds them into pre/post affine maps,
checks everything against the S-box table, and prints Rust snippets.

Usage: python3 gen_sbox.py path/to/sbox.rs   (any file containing the 256
S-box bytes as 0x.. literals in order, e.g. the sm4 crate's consts.rs)
"""
import re
import sys


def gmul(a, b, poly):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a & 0x100:
            a ^= poly
    return r


def parity(x):
    return bin(x).count("1") & 1


def rotl8(x, n):
    n %= 8
    return ((x << n) | (x >> (8 - n))) & 0xFF


# A linear map on bytes is stored as 8 row masks: out bit i = parity(row[i] & x)
def apply(rows, x):
    return sum(parity(r & x) << i for i, r in enumerate(rows))


def from_fn(f):
    """Matrix of a linear function given as a Python callable."""
    rows = [0] * 8
    for j in range(8):
        y = f(1 << j)
        for i in range(8):
            if (y >> i) & 1:
                rows[i] |= 1 << j
    return rows


def compose(m2, m1):
    return from_fn(lambda x: apply(m2, apply(m1, x)))


def invert(m):
    table = {apply(m, x): x for x in range(256)}
    assert len(table) == 256
    return from_fn(lambda y: table[y])


SM4_POLY, AES_POLY = 0x1F5, 0x11B
A = [rotl8(0xA7, i) for i in range(8)]
C = 0xD3


def load_sbox(path):
    src = open(path).read()
    return [int(h, 16) for h in re.findall(r"0x[0-9a-fA-F]{2}\b", src)][:256]


def field_inv(a, mul):
    if a == 0:
        return 0
    for b in range(1, 256):
        if mul(a, b) == 1:
            return b
    raise ValueError


def iso_from_sm4(mul):
    """Linear map from the SM4 field to the field with multiplication `mul`:
    send x to a root beta of the SM4 polynomial."""
    def power(b, e):
        r = 1
        for _ in range(e):
            r = mul(r, b)
        return r
    for beta in range(2, 256):
        val = 0
        for e in range(9):
            if (SM4_POLY >> e) & 1:
                val ^= power(beta, e)
        if val == 0:
            basis = [power(beta, i) for i in range(8)]
            return from_fn(lambda x: _lin(basis, x))
    raise ValueError


def _lin(basis, x):
    y = 0
    for i in range(8):
        if (x >> i) & 1:
            y ^= basis[i]
    return y


# ---- GF((2^4)^2) tower: GF(16) = GF(2)[t]/(t^4+t+1), GF(256) = GF(16)[y]/(y^2+y+LAMBDA)
def g16mul(a, b):
    r = 0
    for i in range(4):
        if (b >> i) & 1:
            r ^= a << i
    for i in (6, 5, 4):
        if (r >> i) & 1:
            r ^= 0x13 << (i - 4)
    return r


def pick_lambda():
    for lam in range(1, 16):
        if all(g16mul(y, y) ^ y ^ lam for y in range(16)):
            return lam
    raise ValueError


LAMBDA = pick_lambda()


def tmul(a, b):
    a0, a1, b0, b1 = a & 15, a >> 4, b & 15, b >> 4
    hh = g16mul(a1, b1)
    hi = hh ^ g16mul(a1, b0) ^ g16mul(a0, b1)
    lo = g16mul(hh, LAMBDA) ^ g16mul(a0, b0)
    return lo | (hi << 4)


def main():
    S = load_sbox(sys.argv[1])
    assert len(S) == 256
    sm4mul = lambda a, b: gmul(a, b, SM4_POLY)
    for x in range(256):
        assert apply(A, field_inv(apply(A, x) ^ C, sm4mul)) ^ C == S[x]

    # ---- AES-NI: S(x) = M2 * AES_S(M1*x + c1) + c2
    aesmul = lambda a, b: gmul(a, b, AES_POLY)
    aes_aff = [rotl8(0xF1, i) for i in range(8)]
    aes_s = [apply(aes_aff, field_inv(x, aesmul)) ^ 0x63 for x in range(256)]
    psi = iso_from_sm4(aesmul)
    m1, c1 = compose(psi, A), apply(psi, C)
    m2 = compose(A, compose(invert(psi), invert(aes_aff)))
    c2 = apply(m2, 0x63) ^ C
    for x in range(256):
        assert apply(m2, aes_s[apply(m1, x) ^ c1]) ^ c2 == S[x]
    tabs = {
        "PRE_LO": [apply(m1, n) ^ c1 for n in range(16)],
        "PRE_HI": [apply(m1, n << 4) for n in range(16)],
        "POST_LO": [apply(m2, n) ^ c2 for n in range(16)],
        "POST_HI": [apply(m2, n << 4) for n in range(16)],
    }
    print("// ---- x86 nibble tables (pshufb)")
    for k, v in tabs.items():
        print(f"const {k}: [u8; 16] = [{', '.join(f'0x{b:02x}' for b in v)}];")

    # ---- tower field for the bitsliced soft backend
    tinv = [field_inv(x, tmul) for x in range(256)]
    phi = iso_from_sm4(tmul)
    min_, cin = compose(phi, A), apply(phi, C)
    mout = compose(A, invert(phi))
    for x in range(256):
        assert apply(mout, tinv[apply(min_, x) ^ cin]) ^ C == S[x]
    print(f"// ---- soft: LAMBDA = {LAMBDA:#x}")
    emit_linear("input map (x -> phi(A x + C))", min_, cin)
    emit_linear("output map (v -> A phi^-1 v + C)", mout, C)
    # delta = LAMBDA*a1^2 + a0^2 (the a1*a0 product is added separately): linear in (a0,a1)
    dl = [0] * 4
    for j in range(8):
        a0, a1 = (1 << j) & 15, (1 << j) >> 4
        v = g16mul(LAMBDA, g16mul(a1, a1)) ^ g16mul(a0, a0)
        for i in range(4):
            if (v >> i) & 1:
                dl[i] |= 1 << j
    emit_linear("delta linear part (lambda*a1^2 + a0^2)", dl, 0, n_out=4)
    # ANF of GF(16) inversion
    print("// ---- GF(16) inverse ANF: monomials over a0..a3")
    inv16 = [0] + [next(b for b in range(16) if g16mul(a, b) == 1) for a in range(1, 16)]
    for i in range(4):
        anf = [(inv16[x] >> i) & 1 for x in range(16)]
        for k in range(4):
            for x in range(16):
                if (x >> k) & 1:
                    anf[x] ^= anf[x ^ (1 << k)]
        terms = ["".join(f"a{k}" for k in range(4) if (m >> k) & 1) or "1" for m in range(16) if anf[m]]
        print(f"// inv bit {i} = " + " ^ ".join(terms))


def emit_linear(name, rows, const, n_out=8):
    print(f"// {name}")
    for i in range(n_out):
        terms = [f"x[{j}]" for j in range(8) if (rows[i] >> j) & 1]
        expr = " ^ ".join(terms)
        if (const >> i) & 1:
            expr = f"!({expr})"
        print(f"y[{i}] = {expr};")


if __name__ == "__main__":
    main()
