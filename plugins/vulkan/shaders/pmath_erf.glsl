/* pmath_erf.glsl -- erfc and tanh.  Part of pmath.glsl (GLSL 4.50 + C11).
 *
 * erfc(x), a = |x|:
 *   a < 1/2:   1 - erf(x), erf from its Taylor series with 2/sqrt(pi) and
 *              1 - (2/sqrt(pi)) x formed in double-double.
 *   a < 4:     exp(-a^2) * erfcx(a), erfcx from piecewise polynomials in
 *              u = (a - mid) * invhw (exact), leading coefficient double-double.
 *   a < 28:    exp(-a^2) * H(1/a^2) / a with H(t) = a erfcx(a) fitted in t.
 *   exp(-a^2) is evaluated from the exact double-double a^2 and multiplied in
 *   before the single final rounding (so the deep tail keeps full accuracy and
 *   subnormal results are rounded once).  x < 0: 2 - erfc(a).
 * The polynomials are Chebyshev interpolants computed with mpmath (300-bit),
 * 18 doubles per row (mid, 1/halfwidth, c0 hi, c0 lo, c1..c14):
 *   row 0: erfcx on [0.5, 1], degree 14, fit error 5.4e-18
 *   row 1: erfcx on [1, 1.5], degree 13, fit error 9.3e-18
 *   row 2: erfcx on [1.5, 2], degree 12, fit error 5.9e-18
 *   row 3: erfcx on [2, 2.5], degree 12, fit error 8.9e-18
 *   row 4: erfcx on [2.5, 3], degree 11, fit error 7.4e-18
 *   row 5: erfcx on [3, 3.5], degree 11, fit error 3.6e-18
 *   row 6: erfcx on [3.5, 4], degree 11, fit error 8.9e-19
 *   row 7: H on [0.015625, 0.0625], degree 12, fit error 1.4e-18
 *   row 8: H on [0.00127551, 0.015625], degree 8, fit error 7.1e-18
 */
#ifndef PMATH_ERF_GLSL
#define PMATH_ERF_GLSL

#define PMI_2_SQRTPI_HI PM_MK(0x3FF20DD7u, 0x50429B6Du) /* 2/sqrt(pi) */
#define PMI_2_SQRTPI_LO PM_MK(0x3C71AE3Au, 0x914FED80u)

/* erf Taylor coefficients (-1)^n / (n! (2n+1)), n = 1..14 (times 2/sqrt(pi)) */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_erf_c, 28)
  0xBFD55555u, 0x55555555u, /* -0.33333333333333331 */
  0x3FB99999u, 0x9999999Au, /* 0.10000000000000001 */
  0xBF986186u, 0x18618618u, /* -0.023809523809523808 */
  0x3F72F684u, 0xBDA12F68u, /* 0.0046296296296296294 */
  0xBF48D301u, 0x8D3018D3u, /* -0.00075757575757575758 */
  0x3F1C01C0u, 0x1C01C01Cu, /* 0.00010683760683760684 */
  0xBEEBBD77u, 0x9334EF0Bu, /* -1.3227513227513228e-05 */
  0x3EB87A00u, 0x187A0018u, /* 1.4589169000933706e-06 */
  0xBE83777Cu, 0x55568CCDu, /* -1.4503852223150468e-07 */
  0x3E4C2E30u, 0x54870B38u, /* 1.3122532963802806e-08 */
  0xBE12B673u, 0x10AA9F3Au, /* -1.0892221037148573e-09 */
  0x3DD6F448u, 0xE13E85E1u, /* 8.3507027951472397e-11 */
  0xBD9A289Eu, 0xE7E40F74u, /* -5.9477940136376354e-12 */
  0x3D5BD577u, 0xE658D020u  /* 3.9554295164585257e-13 */
PM_TABLE_END
#endif

#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_erfc_tab, 324)
  0x3FE80000u, 0x00000000u, /* 0.75 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FE038D5u, 0x4EA3D834u, /* 0.50693765029314486 */
  0xBC8EC213u, 0x4D851665u, /* -5.335681035462232e-17 */
  0xBFB78CDDu, 0x551EE51Au, /* -0.091993172913948845 */
  0x3F8D9009u, 0x3AE10928u, /* 0.014434883221956143 */
  0xBF609E77u, 0xD40E01CEu, /* -0.0020286884686699707 */
  0x3F31192Fu, 0x5BD6873Cu, /* 0.00026090055674831184 */
  0xBF0054D6u, 0x8296D26Au, /* -3.1149669961126638e-05 */
  0x3ECD43A7u, 0xC7A7C0FAu, /* 3.4885738930888148e-06 */
  0xBE98C97Du, 0xD23CACEBu, /* -3.6935621693335953e-07 */
  0x3E63F818u, 0x962C9A60u, /* 3.7195394117420852e-08 */
  0xBE2EC0D2u, 0x93395F67u, /* -3.5801452026870127e-09 */
  0x3DF6B984u, 0xC0138DD8u, /* 3.3068764400087581e-10 */
  0xBDC02A04u, 0xA14E43AAu, /* -2.9402386916856611e-11 */
  0x3D8635D5u, 0xFE5FC73Cu, /* 2.5250183778041673e-12 */
  0xBD4E412Fu, 0x7345926Eu, /* -2.1497207771274829e-13 */
  0x3D137D78u, 0x63EBADE2u, /* 1.7310702436308993e-14 */
  0x3FF40000u, 0x00000000u, /* 1.25 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FD78A69u, 0x2138767Au, /* 0.36782291645236109 */
  0x3C1A9D91u, 0x073B5101u, /* 3.607072079916514e-19 */
  0xBFAABAACu, 0xDBFA8B07u, /* -0.052205468991152464 */
  0x3F7B56F4u, 0x5EEF7E3Fu, /* 0.006674723218537403 */
  0xBF49B635u, 0xAC624AC6u, /* -0.00078466053743605417 */
  0x3F168A25u, 0xA664836Fu, /* 8.5981891605258742e-05 */
  0xBEE29963u, 0x6D6C9209u, /* -8.8687769853124598e-06 */
  0x3EAD1B69u, 0x597F0C3Du, /* 8.6745847038166433e-07 */
  0xBE75B8BCu, 0x9419D840u, /* -8.0919368117483784e-08 */
  0x3E3F0FE8u, 0xA88D3CD7u, /* 7.2322189424948945e-09 */
  0xBE055C08u, 0xC80D2503u, /* -6.2164352840924157e-10 */
  0x3DCC55C9u, 0x24775CC5u, /* 5.1541247449058564e-11 */
  0xBD922F10u, 0x017EC710u, /* -4.134526075119391e-12 */
  0x3D571368u, 0x494F04CFu, /* 3.2792698382308406e-13 */
  0xBD1BDE45u, 0x264F2361u, /* -2.4751971707679498e-14 */
  0x00000000u, 0x00000000u, /* 0 */
  0x3FFC0000u, 0x00000000u, /* 1.75 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FD23CFCu, 0x2F1DC7E0u, /* 0.28497223473743638 */
  0x3C63B104u, 0x0EB318C2u, /* 8.539813023973122e-18 */
  0xBFA0C3D5u, 0x38446446u, /* -0.032744086378621293 */
  0x3F6C8D0Cu, 0xEF0F810Bu, /* 0.0034852268804429535 */
  0xBF36CB52u, 0xFE48AA6Au, /* -0.00034781242564699852 */
  0x3F013648u, 0xA1200A4Bu, /* 3.2829371903648855e-05 */
  0xBEC8BF71u, 0x6A3687C0u, /* -2.9501705555859479e-06 */
  0x3E9106BDu, 0x5BD4D867u, /* 2.5371204144824148e-07 */
  0xBE568389u, 0x1BA8746Eu, /* -2.096762028769442e-08 */
  0x3E1CB4C7u, 0x2A23CA01u, /* 1.6709186608641939e-09 */
  0xBDE1B213u, 0x85B931BEu, /* -1.2875251113676387e-10 */
  0x3DA526B8u, 0x2CC3D117u, /* 9.6184738983465703e-12 */
  0xBD68F3EEu, 0xFEB58947u, /* -7.0920309336895137e-13 */
  0x3D2C2CBCu, 0xB12E7517u, /* 5.0048417345007894e-14 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x40020000u, 0x00000000u, /* 2.25 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FCD9444u, 0x6D627932u, /* 0.23108725873039188 */
  0xBC5A8198u, 0xA8216449u, /* -5.74762364596782e-18 */
  0xBF96A70Du, 0x2BB37410u, /* -0.022121625702187286 */
  0x3F606156u, 0x70E25A7Bu, /* 0.0019995392131691415 */
  0xBF26883Fu, 0x9919A8BDu, /* -0.00017190719931942612 */
  0x3EEDA595u, 0x561F845Au, /* 1.4136700602964347e-05 */
  0xBEB2BD25u, 0x1B95E628u, /* -1.1169223469151147e-06 */
  0x3E76D774u, 0x3D1E8F4Du, /* 8.5091655748076111e-08 */
  0xBE3AED7Fu, 0x201A226Fu, /* -6.2695986194639663e-09 */
  0x3DFEC774u, 0x2E8F2C7Cu, /* 4.4789509476220919e-10 */
  0xBDC11753u, 0x93AEF3FCu, /* -3.1088564414147921e-11 */
  0x3D827AA2u, 0x97CF26B2u, /* 2.1008240164929501e-12 */
  0xBD43BDB3u, 0x89C97D01u, /* -1.402683891597517e-13 */
  0x3D044F92u, 0xFF5F9B20u, /* 9.0198234457650358e-15 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x40060000u, 0x00000000u, /* 2.75 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FC8C9EBu, 0x68FF27D7u, /* 0.19366209627906869 */
  0xBC6DD25Bu, 0x26AA8C7Eu, /* -1.2933102225662601e-17 */
  0xBF903057u, 0x81330099u, /* -0.015809409390158711 */
  0x3F543B98u, 0xBAC83954u, /* 0.0012349120617077452 */
  0xBF184E9Au, 0xB30E6BCCu, /* -9.2724029640597189e-05 */
  0x3EDC2C72u, 0xFD6495F5u, /* 6.7171167386407143e-06 */
  0xBE9F99E4u, 0x1EBE3C1Bu, /* -4.7089363763240101e-07 */
  0x3E6131BBu, 0x33A8DEF3u, /* 3.2026810055058245e-08 */
  0xBE22312Bu, 0x40E1EF96u, /* -2.1178352466355718e-09 */
  0x3DE2BF7Cu, 0xAE6B52ABu, /* 1.3640962596429749e-10 */
  0xBDA2D9FEu, 0x0478B311u, /* -8.5726843503575725e-12 */
  0x3D62B802u, 0xE9188AF3u, /* 5.3202013564187685e-13 */
  0xBD21FBA2u, 0xBE3B3BD0u, /* -3.1944139800014496e-14 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x400A0000u, 0x00000000u, /* 3.25 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FC54A7Au, 0x08D4BB45u, /* 0.16633534842682188 */
  0xBC2EA5BAu, 0xD44AC4F3u, /* -8.3069895467454892e-19 */
  0xBF882A85u, 0x22B868A1u, /* -0.011799850580292594 */
  0x3F4A7EDDu, 0xC9EE64B6u, /* 0.00080858068018865056 */
  0xBF0C24B4u, 0x9C47A33Eu, /* -5.3679239076681668e-05 */
  0x3ECD0858u, 0x579AEB98u, /* 3.4609553808107121e-06 */
  0xBE8D25EBu, 0xBA16B3FDu, /* -2.1717047808453134e-07 */
  0x3E4C882Fu, 0x1E4481A1u, /* 1.3286233398679486e-08 */
  0xBE0B45D0u, 0x3DC92253u, /* -7.9374029187131988e-10 */
  0x3DC97DA1u, 0x805F6883u, /* 4.6367396074215426e-11 */
  0xBD87539Cu, 0xD3D72E28u, /* -2.6519287243643663e-12 */
  0x3D451C00u, 0x1D4427DBu, /* 1.4999114302159051e-13 */
  0xBD02917Bu, 0x68430B1Bu, /* -8.245976921527064e-15 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x400E0000u, 0x00000000u, /* 3.75 */
  0x40100000u, 0x00000000u, /* 4 */
  0x3FC2A2AFu, 0x19C14930u, /* 0.14558972127503855 */
  0xBC6FC253u, 0x673ABCACu, /* -1.3773307638700177e-17 */
  0xBF82AA65u, 0x03ACDA11u, /* -0.0091140643831808827 */
  0x3F422F06u, 0x64F3CC1Fu, /* 0.00055492222045783527 */
  0xBF01434Au, 0xE05873C9u, /* -3.292629484639255e-05 */
  0x3EBFFF03u, 0x2A0A7B41u, /* 1.9071186800123854e-06 */
  0xBE7CFCDEu, 0xA1AF391Au, /* -1.079878661346323e-07 */
  0x3E39B50Du, 0x1C080B0Cu, /* 5.9854312066595439e-09 */
  0xBDF65778u, 0xB67E246Fu, /* -3.2511431610477515e-10 */
  0x3DB30C13u, 0x051804DAu, /* 1.7323295851936345e-11 */
  0xBD6FE3B6u, 0x332AF115u, /* -9.0635407160119736e-13 */
  0x3D2A6ED9u, 0x8691355Bu, /* 4.6954452198480702e-14 */
  0xBCE5613Bu, 0xC2A260D8u, /* -2.3736366338747336e-15 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x3FA40000u, 0x00000000u, /* 0.0390625 */
  0x40455555u, 0x55555555u, /* 42.666666666666664 */
  0x3FE1B867u, 0x613697EDu, /* 0.5537602328010941 */
  0x3C7CE615u, 0xD72E0048u, /* 2.5065688032364403e-17 */
  0xBF784D74u, 0x9F1FC0EAu, /* -0.0059332423715974057 */
  0x3F276FF1u, 0x732A7696u, /* 0.00017881224046771967 */
  0xBEE1C12Eu, 0x86CAF9D5u, /* -8.4660607283488683e-06 */
  0x3EA1D413u, 0x4A320D47u, /* 5.3132830081550803e-07 */
  0xBE65E060u, 0x5F1D066Du, /* -4.0748101683238869e-08 */
  0x3E2F48DEu, 0x2F4BA762u, /* 3.6420114652957664e-09 */
  0xBDF947DEu, 0xAAFF0A97u, /* -3.6788320566619124e-10 */
  0x3DC698F3u, 0x1AE9E60Cu, /* 4.110453935922436e-11 */
  0xBD95F431u, 0x694F5FD0u, /* -4.9917341488327397e-12 */
  0x3D66FB2Fu, 0xB314146Du, /* 6.5316489175849433e-13 */
  0xBD3BBD7Bu, 0x1119E1FAu, /* -9.8552842687950954e-14 */
  0x3D108203u, 0x65BE0C2Du, /* 1.4661928862733836e-14 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x3F814E5Eu, 0x0A72F054u, /* 0.008450255102040817 */
  0x40616C16u, 0xC16C16C1u, /* 139.37777777777777 */
  0x3FE1FA8Eu, 0x3EA79F69u, /* 0.56183540570507973 */
  0xBC8F90FFu, 0xD73B8FF2u, /* -5.4758981758852385e-17 */
  0xBF602C3Au, 0x0B40A6B4u, /* -0.0019742139502526238 */
  0x3EF57921u, 0xCA325665u, /* 2.0478412477395453e-05 */
  0xBE976337u, 0xA2ABE734u, /* -3.4850191592239155e-07 */
  0x3E418EF1u, 0xA9C813AAu, /* 8.1762554999129114e-09 */
  0xBDF0B1E6u, 0xAA271F6Au, /* -2.4294314663541376e-10 */
  0x3DA31E1Fu, 0xCBC12C9Eu, /* 8.6937110005149954e-12 */
  0xBD59A5A8u, 0xD6003421u, /* -3.6446731829192761e-13 */
  0x3D137C73u, 0x3F021135u, /* 1.7307163272587295e-14 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u  /* 0 */
PM_TABLE_END
#endif

/* Row i evaluated at v, as a double-double. */
PM_FN PM_DD_T pmi_erfc_poly(int i, double v) {
  int b = 18 * i;
  PM_PRECISE double u = (v - PM_TAB(pmi_erfc_tab, b)) * PM_TAB(pmi_erfc_tab, b + 1);
  PM_PRECISE double p = PM_TAB(pmi_erfc_tab, b + 17);
  PM_LOOP for (int j = 16; j >= 4; j--) p = PM_TAB(pmi_erfc_tab, b + j) + u * p;
  PM_DD_T pr = pmi_two_prod(u, p);
  PM_DD_T s = pmi_two_sum(PM_TAB(pmi_erfc_tab, b + 2), pr.hi);
  PM_PRECISE double l = s.lo + (pr.lo + PM_TAB(pmi_erfc_tab, b + 3));
  return pmi_fast_two_sum(s.hi, l);
}

/* erfc(a) for 1/2 <= a < 28 (finite). */
PM_FN double pmi_erfc_pos(double a) {
  PM_DD_T a2 = pmi_two_prod(a, a);
  PM_DD_T g;
  if (a < PM_D(4.0)) {
    g = pmi_erfc_poly(PM_INT((a - PM_D(0.5)) * PM_D(2.0)), a);
  } else {
    PM_PRECISE double t = pm_div(PM_D(1.0), a2.hi);
    PM_DD_T h = pmi_erfc_poly(a < PM_D(8.0) ? 7 : 8, t);
    PM_PRECISE double gh = pm_div(h.hi, a);
    PM_PRECISE double rr = PM_FMA(-gh, a, h.hi) + h.lo;
    g = pmi_fast_two_sum(gh, pm_div(rr, a));
  }
  return pmi_exp_mul(PM_DD(-a2.hi, -a2.lo), g);
}

PM_FN double pm_erfc(double x) {
  if (PM_ISNAN(x)) return x;
  PM_PRECISE double a = PM_ABS(x);
  if (a < PM_D(0.5)) {
    PM_PRECISE double w = x * x;
    PM_PRECISE double p = PM_TAB(pmi_erf_c, 13);
    PM_LOOP for (int j = 12; j >= 0; j--) p = PM_TAB(pmi_erf_c, j) + w * p;
    PM_DD_T t = pmi_two_prod(PMI_2_SQRTPI_HI, x);
    PM_DD_T s = pmi_two_sum(PM_D(1.0), -t.hi);
    PM_PRECISE double xwp = (x * w) * p;
    PM_PRECISE double tail = s.lo - ((t.lo + PMI_2_SQRTPI_LO * x) + PMI_2_SQRTPI_HI * xwp);
    PM_PRECISE double res = s.hi + tail;
    return res;
  }
  if (a >= PM_D(28.0)) return x > PM_D(0.0) ? PM_D(0.0) : PM_D(2.0);
  PM_PRECISE double e = pmi_erfc_pos(a);
  if (x > PM_D(0.0)) return e;
  PM_PRECISE double res = PM_D(2.0) - e;
  return res;
}

/* tanh(x) = q / (q + 2) with q = expm1(2|x|) in double-double. */
PM_FN double pm_tanh(double x) {
  if (PM_ISNAN(x)) return x;
  PM_PRECISE double a = PM_ABS(x);
  if (a > PM_D(22.0)) return x > PM_D(0.0) ? PM_D(1.0) : PM_D(-1.0);
  if (a < pmi_pow2(-28)) return x;
  PM_DD_T q = pmi_expm1_dd(PM_D(2.0) * a);
  PM_DD_T d = pmi_dd_add_d(q, PM_D(2.0));
  PM_PRECISE double th = pm_div(q.hi, d.hi);
  PM_PRECISE double r = PM_FMA(-th, d.hi, q.hi) + (q.lo - th * d.lo);
  PM_PRECISE double t = th + pm_div(r, d.hi);
  return x < PM_D(0.0) ? -t : t;
}

#endif /* PMATH_ERF_GLSL */
