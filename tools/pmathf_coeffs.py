#!/usr/bin/env python3
"""pmathf_coeffs.py -- derive the constants and polynomial coefficients of plugins/gpumath/pmathf.h.

Every coefficient is rounded to float32 and printed as PF_CF(0xBITSu, decimal) (bits are what the
library uses; the decimal is the float's value to 9 digits, checked against the bits by the test).
Fits are mpmath Chebyshev fits (near-minimax); the script reports each fit's worst relative error
after the coefficients were rounded to float32 (evaluated in exact arithmetic on a fine grid).
Run: python3 tools/pmathf_coeffs.py   (mpmath only; prints the C/GLSL snippets to paste)."""
import struct
import mpmath as mp

mp.mp.prec = 400


def f32(x):
    return struct.unpack('<f', struct.pack('<f', float(mp.mpf(x))))[0]


def rn32(x):
    """round an mpf to float32 exactly (via double is fine only when double rounding cannot bite:
    do it properly with mpmath)."""
    x = mp.mpf(x)
    if x == 0:
        return mp.mpf(0)
    m, e = mp.frexp(x)  # x = m * 2^e, 0.5 <= |m| < 1
    return mp.ldexp(mp.nint(mp.ldexp(m, 24)), e - 24)


def bits(x):
    return struct.unpack('<I', struct.pack('<f', float(x)))[0]


def cf(x):
    v = rn32(x)
    return 'PF_CF(0x%08Xu, %.9g)' % (bits(v), float(v))


def horner(name, coeffs, var):
    # coeffs low degree first
    s = cf(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        s = '%s + %s * (%s)' % (cf(c), var, s)
    return s


def fit(name, f, a, b, deg, var='t', c0=None):
    """Chebyshev fit of f on [a, b] (degree deg); coefficients rounded to f32; rel error reported."""
    # Relative least squares on Chebyshev points; the coefficients are rounded to float32 one at a
    # time, low degree first, and the higher ones refitted to what the rounded lower ones leave,
    # so rounding errors do not pile up.
    npts = 4 * deg + 40
    ts = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf(1) / 2) / npts) for i in range(npts)]
    fs = [f(t) for t in ts]
    c = [] if c0 is None else [rn32(c0)]
    for k in range(len(c), deg + 1):
        A = mp.matrix(npts, deg + 1 - k)
        rhs = mp.matrix(npts, 1)
        for i, t in enumerate(ts):
            w = 1 / abs(fs[i]) if fs[i] != 0 else mp.mpf(1)
            for j in range(deg + 1 - k):
                A[i, j] = w * t**(j + k)
            rhs[i] = w * (fs[i] - sum(cj * t**jj for jj, cj in enumerate(c)))
        sol, _ = mp.qr_solve(A, rhs)
        c.append(rn32(sol[0]))
    worst = mp.mpf(0)
    n = 2000
    for i in range(n + 1):
        t = a + (b - a) * i / n
        v = mp.mpf(0)
        for cc in reversed(c):
            v = v * t + cc
        ref = f(t)
        if ref != 0:
            worst = max(worst, abs(v / ref - 1))
    print('/* %s: degree %d on [%s, %s], rel err %.3g = 2^%.1f */' % (name, deg, mp.nstr(a, 6), mp.nstr(b, 6),
                                                                       float(worst), float(mp.log(worst, 2)) if worst else -999))
    return c


def main():
    ln2 = mp.log(2)
    # ln2 in three parts: L1, L2 with <= 16 significant bits (n * L for |n| <= 255 exact), L3 rest.
    L1 = mp.floor(ln2 * 2**16) / 2**16
    L2 = mp.floor((ln2 - L1) * 2**32) / 2**32
    L3 = rn32(ln2 - L1 - L2)
    print('#define PF_LN2_1 %s' % cf(L1))
    print('#define PF_LN2_2 %s' % cf(L2))
    print('#define PF_LN2_3 %s' % cf(L3))
    assert rn32(L1) == L1 and rn32(L2) == L2
    print('#define PF_LOG2E %s' % cf(1 / ln2))
    p1 = rn32(mp.pi / 2)
    p2 = rn32(mp.pi / 2 - p1)
    print('#define PF_PIO2_1 %s' % cf(p1))
    print('#define PF_PIO2_2 %s' % cf(p2))
    print('#define PF_RSQRT2PI %s' % cf(1 / mp.sqrt(2 * mp.pi)))
    # 2/pi bits, 8 words
    v = 2 / mp.pi
    words = []
    for i in range(8):
        v *= 2**32
        w = int(mp.floor(v))
        words.append(w)
        v -= w
    print('/* 2/pi words: ' + ' '.join('%08X' % w for w in words) + ' */')

    # exp: e^r = 1 + r + r^2 P(r), |r| <= ln2/2 (+ slack)
    h = ln2 / 2 * mp.mpf('1.01')
    c = fit('exp P', lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(0.5), -h, h, 5)
    print('exp P(r) = ' + horner('P', c, 'r'))
    # log: log1p(f) = 2s + s * R(z), z = s^2, s = f/(2+f), |s| <= (sqrt2-1)/(sqrt2+1)
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) * mp.mpf('1.001')

    def rlog(z):
        if z == 0:
            return mp.mpf(2) / 3
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / (s * z)
    c = fit('log R/z', rlog, mp.mpf(0), smax**2, 4, 'z')
    print('log R(z)/z = ' + horner('R', c, 'z'))
    # sin: sin h = h + h^3 S(z); cos h = 1 - z/2 + z^2 C(z), z = h^2, |h| <= pi/4 (+ slack)
    zmax = (mp.pi / 4 * mp.mpf('1.001'))**2
    c = fit('sin S', lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)) if z else mp.mpf(-1) / 6, mp.mpf(0), zmax, 4, 'z')
    print('sin S(z) = ' + horner('S', c, 'z'))
    c = fit('cos C', lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2 if z else mp.mpf(1) / 24, mp.mpf(0), zmax, 4, 'z')
    print('cos C(z) = ' + horner('C', c, 'z'))
    # tanh: tanh x = x + x^3 T(z), |x| <= 0.55
    c = fit('tanh T', lambda z: (mp.tanh(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)) if z else mp.mpf(-1) / 3, mp.mpf(0), mp.mpf('0.5501')**2, 7, 'z')
    print('tanh T(z) = ' + horner('T', c, 'z'))
    # Phi: |x| <= 0.75: Phi = 1/2 + x S(z)
    Phi = lambda x: mp.ncdf(x)
    c = fit('phi S', lambda z: (Phi(mp.sqrt(z)) - mp.mpf(1) / 2) / mp.sqrt(z) if z else 1 / mp.sqrt(2 * mp.pi), mp.mpf(0), mp.mpf('0.7501')**2, 6, 'z')
    print('phi S(z) = ' + horner('S', c, 'z'))
    # Q(u) = Phi(-u) e^{u^2/2} piecewise in t = u - c (exact by Sterbenz)
    Q = lambda u: Phi(-u) * mp.exp(u * u / 2)
    for (a, b, ctr, deg) in [(0.75, 2.5, 1.5, 13), (2.5, 5, 4, 12), (5, 9, 7, 12), (9, 14.75, 12, 12)]:
        c = fit('Q [%g,%g] t=u-%g' % (a, b, ctr), lambda t, ctr=ctr: Q(t + ctr), mp.mpf(a) - ctr, mp.mpf(b) - ctr, deg)
        print('Q = ' + horner('Q', c, 't'))
    # underflow thresholds
    for nm, fn in [('Phi', lambda u: Phi(-u)), ('gelu', lambda u: u * Phi(-u)), ('gelu_grad', lambda u: u * mp.npdf(u) - Phi(-u))]:
        u0 = mp.findroot(lambda u: fn(u) - mp.mpf(2)**-150, 14)
        print('/* %s(-u) < 2^-150 for u > %s */' % (nm, mp.nstr(u0, 10)))
    x0 = rn32(mp.findroot(lambda x: Phi(x) + x * mp.npdf(x), -0.75))
    gg = lambda t: Phi(x0 + t) + (x0 + t) * mp.npdf(x0 + t)
    print('#define PF_GG_X0 %s' % cf(x0))
    c = fit('gelu_grad [-1,-0.5] t=x-X0', gg, -1 - x0, -0.5 - x0, 11, c0=gg(0))
    print('gg = ' + horner('G', c, 't'))
    print('/* gelu_grad root %s */' % mp.nstr(mp.findroot(lambda x: Phi(x) + x * mp.npdf(x), -0.75), 20))


main()
