/* pmath_exp_log.glsl -- exp, expm1, log, log1p (and the double-double cores
 * used by pow, tanh and erfc).  Part of pmath.glsl (GLSL 4.50 + C11). */
#ifndef PMATH_EXP_LOG_GLSL
#define PMATH_EXP_LOG_GLSL

#define PM_LN2_HI PM_MK(0x3FE62E42u, 0xFEFA39EFu) /* ln 2 = PM_LN2_HI + PM_LN2_LO */
#define PM_LN2_LO PM_MK(0x3C7ABC9Eu, 0x3B39803Fu)
#define PM_INV_LN2 PM_MK(0x3FF71547u, 0x652B82FEu)

/* ---- exp ---- */

/* 1/n!, n = 3..16 */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_exp_c, 28)
  0x3FC55555u, 0x55555555u, /* 0.16666666666666666 */
  0x3FA55555u, 0x55555555u, /* 0.041666666666666664 */
  0x3F811111u, 0x11111111u, /* 0.0083333333333333332 */
  0x3F56C16Cu, 0x16C16C17u, /* 0.0013888888888888889 */
  0x3F2A01A0u, 0x1A01A01Au, /* 0.00019841269841269841 */
  0x3EFA01A0u, 0x1A01A01Au, /* 2.4801587301587302e-05 */
  0x3EC71DE3u, 0xA556C734u, /* 2.7557319223985893e-06 */
  0x3E927E4Fu, 0xB7789F5Cu, /* 2.7557319223985888e-07 */
  0x3E5AE645u, 0x67F544E4u, /* 2.505210838544172e-08 */
  0x3E21EED8u, 0xEFF8D898u, /* 2.08767569878681e-09 */
  0x3DE61246u, 0x13A86D09u, /* 1.6059043836821613e-10 */
  0x3DA93974u, 0xA8C07C9Du, /* 1.1470745597729725e-11 */
  0x3D6AE7F3u, 0xE733B81Fu, /* 7.6471637318198164e-13 */
  0x3D2AE7F3u, 0xE733B81Fu  /* 4.7794773323873853e-14 */
PM_TABLE_END
#endif

/* Nearest integer to hi / ln2. */
PM_FN int pmi_exp_k(double hi) {
  PM_PRECISE double t = hi * PM_INV_LN2 + PM_D(0.5);
  return PM_INT(PM_FLOOR(t));
}

/* (hi + lo) - k ln2 as a double-double, |result| <~ 0.35.  The fma is exact:
 * the difference is a multiple of 2^-54 below 0.35. */
PM_FN PM_DD_T pmi_exp_red(double hi, double lo, int k) {
  PM_PRECISE double kd = PM_DBL(k);
  PM_PRECISE double r1 = PM_FMA(-kd, PM_LN2_HI, hi);
  PM_DD_T p = pmi_two_prod(kd, PM_LN2_LO);
  PM_DD_T s = pmi_two_sum(r1, -p.hi);
  PM_PRECISE double l = s.lo + (lo - p.lo);
  return pmi_fast_two_sum(s.hi, l);
}

/* expm1(r) for a double-double |r| <~ 0.35, relative error ~2^-62 (Taylor to
 * degree 16; r^2/2 exact). */
PM_FN PM_DD_T pmi_expm1_poly(PM_DD_T r) {
  PM_PRECISE double z = r.hi;
  PM_PRECISE double p = PM_TAB(pmi_exp_c, 13);
  PM_LOOP for (int j = 12; j >= 0; j--) p = PM_TAB(pmi_exp_c, j) + z * p;
  PM_PRECISE double z3 = z * z * z;
  PM_PRECISE double p3 = z3 * p;
  PM_DD_T h = pmi_two_prod(z, z);
  PM_PRECISE double hh = PM_D(0.5) * h.hi;
  PM_PRECISE double hl = PM_D(0.5) * h.lo;
  PM_DD_T s = pmi_two_sum(z, hh);
  PM_PRECISE double l = s.lo + (r.lo + (hl + (z * r.lo + p3)));
  return pmi_fast_two_sum(s.hi, l);
}

/* RN(exp(a) * m) for a double-double a (|a.hi| < ~750) and a positive
 * double-double m; one final rounding (subnormal results included). */
PM_FN double pmi_exp_mul(PM_DD_T a, PM_DD_T m) {
  int k = pmi_exp_k(a.hi);
  PM_DD_T q = pmi_expm1_poly(pmi_exp_red(a.hi, a.lo, k));
  PM_DD_T one = pmi_two_sum(PM_D(1.0), q.hi);
  PM_PRECISE double ol = one.lo + q.lo;
  PM_DD_T e = pmi_fast_two_sum(one.hi, ol);
  int em = pmi_expo(m.hi);
  PM_PRECISE double mh = m.hi * pmi_pow2(-em);
  PM_PRECISE double ml = m.lo * pmi_pow2(-em);
  PM_DD_T v = pmi_dd_mul(e, PM_DD(mh, ml));
  return pmi_scale(v.hi, v.lo, k + em);
}

PM_FN double pm_exp(double x) {
  if (PM_ISNAN(x)) return x;
  if (x > PM_D(710.0)) return pmi_inf();
  if (x < PM_D(-746.0)) return PM_D(0.0);
  return pmi_exp_mul(PM_DD(x, PM_D(0.0)), PM_DD(PM_D(1.0), PM_D(0.0)));
}

/* expm1(x) as a double-double, -40 <= x <= 45. */
PM_FN PM_DD_T pmi_expm1_dd(double x) {
  int k = pmi_exp_k(x);
  PM_DD_T q = pmi_expm1_poly(pmi_exp_red(x, PM_D(0.0), k));
  if (k == 0) return q;
  PM_PRECISE double u = pmi_pow2(k);
  PM_DD_T s = pmi_two_sum(u, PM_D(-1.0));
  PM_PRECISE double th = u * q.hi;
  PM_PRECISE double tl = u * q.lo;
  return pmi_dd_add(s, PM_DD(th, tl));
}

PM_FN double pm_expm1(double x) {
  if (PM_ISNAN(x)) return x;
  if (PM_ABS(x) < pmi_pow2(-54)) return x;
  if (x > PM_D(40.0)) return pm_exp(x);
  if (x < PM_D(-40.0)) return PM_D(-1.0);
  PM_DD_T d = pmi_expm1_dd(x);
  PM_PRECISE double res = d.hi + d.lo;
  return res;
}

/* ---- log ---- */

/* log1p Taylor coefficients (-1)^(n+1)/n, n = 3..12 */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_log1p_c, 20)
  0x3FD55555u, 0x55555555u, /* 0.33333333333333331 */
  0xBFD00000u, 0x00000000u, /* -0.25 */
  0x3FC99999u, 0x9999999Au, /* 0.20000000000000001 */
  0xBFC55555u, 0x55555555u, /* -0.16666666666666666 */
  0x3FC24924u, 0x92492492u, /* 0.14285714285714285 */
  0xBFC00000u, 0x00000000u, /* -0.125 */
  0x3FBC71C7u, 0x1C71C71Cu, /* 0.1111111111111111 */
  0xBFB99999u, 0x9999999Au, /* -0.10000000000000001 */
  0x3FB745D1u, 0x745D1746u, /* 0.090909090909090912 */
  0xBFB55555u, 0x55555555u  /* -0.083333333333333329 */
PM_TABLE_END
#endif

/* Per cell i (z in [0.6875, 1.375) split into 64 cells by the high word):
 * c_i ~ 1/z (c = 1 for the two cells next to 1), then -log(c_i) as hi, lo. */
#ifdef PM_C /* GLSL reads the tables from a buffer (PM_TAB) */
PM_TABLE_BEGIN(uint, pmi_logtab, 384)
  0x3FF72428u, 0x7F46DEBCu, /* 1.4463276836158192 */
  0xBFD79E26u, 0x687CFB3Du, /* -0.3690277119057333 */
  0xBC7FE977u, 0xE8BBC0DEu, /* -2.7679235568403196e-17 */
  0x3FF6E1F7u, 0x6B4337C7u, /* 1.4301675977653632 */
  0xBFD6E60Eu, 0xE6AF1973u, /* -0.35779163863880753 */
  0x3C756A0Fu, 0x7749E5CDu, /* 1.857394315781863e-17 */
  0x3FF6A13Cu, 0xD1537290u, /* 1.4143646408839778 */
  0xBFD63003u, 0x0B3AAC48u, /* -0.34668041321373666 */
  0xBC7EE0C6u, 0x728FFFCCu, /* -2.67824200913148e-17 */
  0x3FF661ECu, 0x6A5122F9u, /* 1.3989071038251366 */
  0xBFD57BF7u, 0x53C8D1FBu, /* -0.33569129163814154 */
  0x3C62908Du, 0x15F88B63u, /* 8.0511347583696862e-18 */
  0x3FF623FAu, 0x77016240u, /* 1.3837837837837839 */
  0xBFD4C9E0u, 0x9E172C3Du, /* -0.32482161940123772 */
  0x3C512361u, 0x5B147A5Fu, /* 3.716255662863595e-18 */
  0x3FF5E75Bu, 0xB8D015E7u, /* 1.3689839572192513 */
  0xBFD419B4u, 0x23D5E8C6u, /* -0.31406882762497579 */
  0xBC55B764u, 0x8704E721u, /* -4.7089887711133119e-18 */
  0x3FF5AC05u, 0x6B015AC0u, /* 1.3544973544973544 */
  0xBFD36B67u, 0x76BE1116u, /* -0.30343042941992004 */
  0x3C5324F0u, 0xE8838590u, /* 4.1512585401039935e-18 */
  0x3FF571EDu, 0x3C506B3Au, /* 1.3403141361256545 */
  0xBFD2BEF0u, 0x7CDC9355u, /* -0.29290401643293268 */
  0x3C722DADu, 0x7FD86088u, /* 1.5767273459675699e-17 */
  0x3FF53909u, 0x48F40FEBu, /* 1.3264248704663213 */
  0xBFD21445u, 0x6D0EB8D5u, /* -0.28248725557467697 */
  0x3C550A2Du, 0xCA28B3EDu, /* 4.5622709592656976e-18 */
  0x3FF50150u, 0x15015015u, /* 1.3128205128205128 */
  0xBFD16B5Cu, 0xCBACFB73u, /* -0.27217788591581565 */
  0xBC756FBDu, 0x28B40935u, /* -1.8593182624819249e-17 */
  0x3FF4CAB8u, 0x8725AF6Eu, /* 1.2994923857868019 */
  0xBFD0C42Du, 0x676162E2u, /* -0.26197371574157391 */
  0x3C75A74Eu, 0x18A8BB85u, /* 1.8781448102772989e-17 */
  0x3FF49539u, 0xE3B2D067u, /* 1.2864321608040201 */
  0xBFD01EAEu, 0x5626C691u, /* -0.25187261975507008 */
  0xBC6D9F5Bu, 0xD0B5B348u, /* -1.2846709260565683e-17 */
  0x3FF460CBu, 0xC7F5CF9Au, /* 1.2736318407960199 */
  0xBFCEF5ADu, 0xE4DCFFE5u, /* -0.2418725364204867 */
  0xBC57754Du, 0x2238F75Fu, /* -5.0866880622065031e-18 */
  0x3FF42D66u, 0x25D51F87u, /* 1.2610837438423645 */
  0xBFCDB13Du, 0xB0D48941u, /* -0.23197146543777517 */
  0x3C68AF71u, 0x5B0349A4u, /* 1.0705552511300431e-17 */
  0x3FF3FB01u, 0x3FB013FBu, /* 1.248780487804878 */
  0xBFCC6FFBu, 0xC6F00F71u, /* -0.22216746534115431 */
  0x3C6AE58Bu, 0x2C57A4A5u, /* 1.1664564654755913e-17 */
  0x3FF3C995u, 0xA47BABE7u, /* 1.2367149758454106 */
  0xBFCB31D8u, 0x575BCE3Bu, /* -0.21245865121419336 */
  0x3C40D4EAu, 0xCE1AA537u, /* 1.8248974208288598e-18 */
  0x3FF3991Cu, 0x2C187F63u, /* 1.2248803827751196 */
  0xBFC9F6C4u, 0x07089663u, /* -0.20284319251475144 */
  0x3C652979u, 0xA7E86605u, /* 9.177560001701116e-18 */
  0x3FF3698Du, 0xF3DE0748u, /* 1.2132701421800949 */
  0xBFC8BEAFu, 0xEB38FE8Fu, /* -0.19331931100349606 */
  0x3C454AAEu, 0x92CD0B87u, /* 2.3084535888000873e-18 */
  0x3FF33AE4u, 0x5B57BCB2u, /* 1.2018779342723005 */
  0xBFC7898Du, 0x85444C74u, /* -0.18388527877013738 */
  0xBC3BE3DBu, 0xAF3EC804u, /* -1.5119237714141701e-18 */
  0x3FF30D19u, 0x0130D190u, /* 1.1906976744186046 */
  0xBFC6574Eu, 0xBE8C1339u, /* -0.17453941635189965 */
  0xBC6C5961u, 0xE173BC82u, /* -1.2294483916404324e-17 */
  0x3FF2E025u, 0xC04B8097u, /* 1.1797235023041475 */
  0xBFC527E5u, 0xE4A1B58Du, /* -0.16528009093910292 */
  0x3C3B8D4Bu, 0x411CADFFu, /* 1.4935930931804023e-18 */
  0x3FF2B404u, 0xAD012B40u, /* 1.1689497716894977 */
  0xBFC3FB45u, 0xA59928CAu, /* -0.15610571466306161 */
  0x3C6D87E6u, 0xA354D057u, /* 1.2806970330932863e-17 */
  0x3FF288B0u, 0x1288B013u, /* 1.158371040723982 */
  0xBFC2D161u, 0x0C86813Du, /* -0.14701474296180975 */
  0xBC3D9970u, 0x36941A6Du, /* -1.6045849809178003e-18 */
  0x3FF25E22u, 0x708092F1u, /* 1.147982062780269 */
  0xBFC1AA2Bu, 0x7E23F729u, /* -0.13800567301944369 */
  0xBC66E443u, 0x89934420u, /* -9.9276730668658033e-18 */
  0x3FF23456u, 0x789ABCDFu, /* 1.1377777777777778 */
  0xBFC08598u, 0xB59E3A07u, /* -0.12907704227514236 */
  0x3C6FD700u, 0x9902BF32u, /* 1.380833506137427e-17 */
  0x3FF20B47u, 0x0C67C0D9u, /* 1.1277533039647578 */
  0xBFBEC739u, 0x830A1126u, /* -0.12022742699815989 */
  0xBC5EEA03u, 0x3743F95Bu, /* -6.7034293850280347e-18 */
  0x3FF1E2EFu, 0x3B3FB874u, /* 1.1179039301310043 */
  0xBFBC8858u, 0x01BC4B20u, /* -0.11145544092532278 */
  0x3C55C734u, 0xAA6598FCu, /* 4.7223829368380053e-18 */
  0x3FF1BB4Au, 0x4046ED29u, /* 1.1082251082251082 */
  0xBFBA4E76u, 0x40B1BC38u, /* -0.10275973395776894 */
  0x3C59B5CAu, 0x203E4259u, /* 5.5749926045490845e-18 */
  0x3FF19453u, 0x808CA29Cu, /* 1.0987124463519313 */
  0xBFB8197Eu, 0x2F40E3F0u, /* -0.094138990913861909 */
  0x3C423069u, 0x0020895Fu, /* 1.9720664099579867e-18 */
  0x3FF16E06u, 0x89427379u, /* 1.0893617021276596 */
  0xBFB5E95Au, 0x4D9791CDu, /* -0.085591930335403535 */
  0x3C54C78Bu, 0xA3A3BAF6u, /* 4.5058302738580941e-18 */
  0x3FF1485Fu, 0x0E0ACD3Bu, /* 1.0801687763713079 */
  0xBFB3BDF5u, 0xA7D1EE5Eu, /* -0.077117303344431204 */
  0xBC3F52EDu, 0xA76B68ACu, /* -1.6980741255382134e-18 */
  0x3FF12358u, 0xE75D3033u, /* 1.0711297071129706 */
  0xBFB1973Bu, 0xD1465561u, /* -0.068713892548051728 */
  0x3C57AAC1u, 0xB3D35680u, /* 5.1319665020900549e-18 */
  0x3FF0FEF0u, 0x10FEF011u, /* 1.0622406639004149 */
  0xBFAEEA31u, 0xC006B87Cu, /* -0.060380510988907482 */
  0x3C37C9F9u, 0x276F6CD8u, /* 1.2896019993525642e-18 */
  0x3FF0DB20u, 0xA88F4696u, /* 1.0534979423868314 */
  0xBFAAAEF2u, 0xD0FB1108u, /* -0.052116001139014101 */
  0xBC468D4Eu, 0xED0B82AEu, /* -2.4450911742922642e-18 */
  0x3FF0B7E6u, 0xEC259DC8u, /* 1.0448979591836736 */
  0xBFA67C94u, 0xF2D4BB65u, /* -0.043919233934835579 */
  0xBC40413Eu, 0x6505E5F9u, /* -1.7623552700046253e-18 */
  0x3FF0953Fu, 0x39010954u, /* 1.0364372469635628 */
  0xBFA252F3u, 0x2F8D1840u, /* -0.035789107851585289 */
  0xBC2AE021u, 0xB67A9BA8u, /* -7.2846227792942925e-19 */
  0x3FF07326u, 0x0A47F7C6u, /* 1.0281124497991967 */
  0xBF9C63D2u, 0xEC14AAD7u, /* -0.027724548014854768 */
  0xBC08FE7Au, 0xCBCA131Du, /* -1.6936634670586275e-19 */
  0x3FF05197u, 0xF7D73404u, /* 1.0199203187250996 */
  0xBF9432A9u, 0x25980CBCu, /* -0.019724505347778573 */
  0x3C38CDAFu, 0x39004193u, /* 1.3445979863167513e-18 */
  0x3FF03091u, 0xB51F5E1Au, /* 1.0118577075098814 */
  0xBF882448u, 0xA388A283u, /* -0.011787955752042173 */
  0xBC104B16u, 0x137F0970u, /* -2.208154666796599e-19 */
  0x3FF00000u, 0x00000000u, /* 1 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x3FF00000u, 0x00000000u, /* 1 */
  0x00000000u, 0x00000000u, /* 0 */
  0x00000000u, 0x00000000u, /* 0 */
  0x3FEF4465u, 0x9E4A4271u, /* 0.97709923664122134 */
  0x3F97B91Bu, 0x07D5B126u, /* 0.023167059281534418 */
  0xBC16D80Au, 0xB38E9430u, /* -3.0959275521792619e-19 */
  0x3FEECC07u, 0xB301ECC0u, /* 0.96240601503759393 */
  0x3FA39E87u, 0xB9FEBD68u, /* 0.038318864302136657 */
  0xBC45BFA9u, 0x37F551B7u, /* -2.3579961573512846e-18 */
  0x3FEE573Au, 0xC901E574u, /* 0.94814814814814818 */
  0x3FAB42DDu, 0x711971B9u, /* 0.053244514518812243 */
  0x3C40A345u, 0x31F67DB5u, /* 1.8038711349799518e-18 */
  0x3FEDE5D6u, 0xE3F8868Au, /* 0.93430656934306566 */
  0x3FB16536u, 0xEEA37AE3u, /* 0.067950661908507778 */
  0x3C521897u, 0x05CF74CAu, /* 3.9239563038692484e-18 */
  0x3FED77B6u, 0x54B82C34u, /* 0.92086330935251803 */
  0x3FB51B07u, 0x3F06183Cu, /* 0.082443669211074544 */
  0xBC55B61Cu, 0x65E5741Au, /* -4.7079030820468538e-18 */
  0x3FED0CB5u, 0x8F6EC074u, /* 0.90780141843971629 */
  0x3FB8C345u, 0xD6319B23u, /* 0.096729626458551141 */
  0xBC5294D2u, 0xF5668495u, /* -4.0291867005826106e-18 */
  0x3FECA4B3u, 0x055EE191u, /* 0.8951048951048951 */
  0x3FBC5E54u, 0x8F5BC743u, /* 0.11081436634029011 */
  0x3C42EB0Bu, 0xF7C0B0D9u, /* 2.0511100808140527e-18 */
  0x3FEC3F8Fu, 0x01C3F8F0u, /* 0.88275862068965516 */
  0x3FBFEC91u, 0x31DBEABCu, /* 0.12470347850095725 */
  0xBC55746Bu, 0x9981B36Cu, /* -4.6522609636496624e-18 */
  0x3FEBDD2Bu, 0x899406F7u, /* 0.87074829931972786 */
  0x3FC1B72Au, 0xD52F67A2u, /* 0.13840232285911919 */
  0xBC6FBE7Eu, 0xE5C69946u, /* -1.3766819196398948e-17 */
  0x3FEB7D6Cu, 0x3DDA338Bu, /* 0.85906040268456374 */
  0x3FC371FCu, 0x201E8F75u, /* 0.151916042025842 */
  0x3C1E6CB6u, 0x2AF18A02u, /* 4.1233095848339465e-19 */
  0x3FEB2036u, 0x406C80D9u, /* 0.84768211920529801 */
  0x3FC526E5u, 0xE3A1B438u, /* 0.16524957289530717 */
  0xBC6546FFu, 0x8A470D3Au, /* -9.227573884334224e-18 */
  0x3FEAC570u, 0x1AC5701Bu, /* 0.83660130718954251 */
  0x3FC6D60Fu, 0xE719D21Bu, /* 0.17840765747281825 */
  0x3C6D551Du, 0x97132E87u, /* 1.2720936612962572e-17 */
  0x3FEA6D01u, 0xA6D01A6Du, /* 0.82580645161290323 */
  0x3FC87FA0u, 0x6520C911u, /* 0.19139485299962947 */
  0xBC69F7FDu, 0xBFA08D9Au, /* -1.1262135167804481e-17 */
  0x3FEA16D3u, 0xF97A4B02u, /* 0.8152866242038217 */
  0x3FCA23BCu, 0x1FE2B561u, /* 0.20421554142869083 */
  0x3C624DC4u, 0x6C1EA664u, /* 7.9379985298027001e-18 */
  0x3FE9C2D1u, 0x4EE4A102u, /* 0.80503144654088055 */
  0x3FCBC286u, 0x742D8CD4u, /* 0.2168739383006143 */
  0x3C5CFCE7u, 0x44870F57u, /* 6.2857496692110918e-18 */
  0x3FE970E4u, 0xF80CB872u, /* 0.79503105590062106 */
  0x3FCD5C21u, 0x6B4FBB94u, /* 0.2293741010648459 */
  0xBC5A3779u, 0x4D03657Du, /* -5.684839459813236e-18 */
  0x3FE920FBu, 0x49D0E229u, /* 0.78527607361963192 */
  0x3FCEF0ADu, 0xCBDC5935u, /* 0.24171993688714513 */
  0x3C6E8637u, 0x950DC20Du, /* 1.323779871210866e-17 */
  0x3FE8D301u, 0x8D3018D3u, /* 0.77575757575757576 */
  0x3FD04025u, 0x94B4D041u, /* 0.25391520998096345 */
  0xBC608EC2u, 0x17A5022Du, /* -7.1807356564357978e-18 */
  0x3FE886E5u, 0xF0ABB04Au, /* 0.76646706586826352 */
  0x3FD1058Bu, 0xF9AE4AD4u, /* 0.26596354849713788 */
  0x3C03F415u, 0x699663ECu, /* 1.35209848201012e-19 */
  0x3FE83C97u, 0x7AB2BEDDu, /* 0.75739644970414199 */
  0x3FD1C898u, 0xC16999FBu, /* 0.27786845100345631 */
  0x3C79F1A3u, 0x9D500E3Cu, /* 2.2502748630777633e-17 */
  0x3FE7F405u, 0xFD017F40u, /* 0.74853801169590639 */
  0x3FD2895Au, 0x13DE86A4u, /* 0.28963329258304271 */
  0x3C77AD24u, 0xC13F040Fu, /* 2.0535953219858177e-17 */
  0x3FE7AD22u, 0x08E0ECC3u, /* 0.73988439306358378 */
  0x3FD347DDu, 0x9A987D56u, /* 0.30126133057816185 */
  0xBC716EA6u, 0x2C048CFBu, /* -1.5120043309967385e-17 */
  0x3FE767DCu, 0xE434A9B1u, /* 0.73142857142857143 */
  0x3FD40430u, 0x8686A7E4u, /* 0.3127557100038969 */
  0xBC6F79F6u, 0xC1059CDBu  /* -1.3650721793001109e-17 */
PM_TABLE_END
#endif

/* log(x) as a double-double (relative error ~2^-100), x > 0 finite. */
PM_FN PM_DD_T pmi_log_dd(double x) {
  uint hx = PM_HI(x);
  uint lx = PM_LO(x);
  int kadj = 0;
  if (hx < 0x00100000u) {
    PM_PRECISE double y = x * pmi_pow2(54);
    hx = PM_HI(y);
    lx = PM_LO(y);
    kadj = -54;
  }
  uint ut = hx + 0x001A0000u;
  int k = PM_INT(ut >> 20) - 1024;
  int i = PM_INT((ut >> 14) & 63u);
  PM_PRECISE double z = PM_MK(PM_UINT(PM_INT(hx) - k * 1048576), lx);
  PM_PRECISE double c = PM_TAB(pmi_logtab, 3 * i);
  /* r = z c - 1 exactly, as a double-double; |r| <= 2^-6 */
  PM_DD_T p = pmi_two_prod(z, c);
  PM_PRECISE double rh = p.hi - PM_D(1.0);
  PM_DD_T r = pmi_two_sum(rh, p.lo);
  PM_PRECISE double t = r.hi;
  PM_PRECISE double q = PM_TAB(pmi_log1p_c, 9);
  PM_LOOP for (int j = 8; j >= 0; j--) q = PM_TAB(pmi_log1p_c, j) + t * q;
  PM_PRECISE double t3 = t * t * t;
  PM_PRECISE double pq = t3 * q;
  PM_DD_T h = pmi_two_prod(t, t);
  PM_PRECISE double hh = PM_D(0.5) * h.hi;
  PM_PRECISE double hl = PM_D(0.5) * h.lo;
  PM_DD_T s = pmi_two_sum(t, -hh);
  PM_PRECISE double l = s.lo + ((r.lo - (hl + t * r.lo)) + pq);
  PM_DD_T l1 = pmi_fast_two_sum(s.hi, l);
  PM_PRECISE double kd = PM_DBL(k + kadj);
  PM_DD_T kl = pmi_two_prod(kd, PM_LN2_HI);
  PM_PRECISE double kll = kl.lo + kd * PM_LN2_LO;
  PM_DD_T kln2 = pmi_fast_two_sum(kl.hi, kll);
  PM_DD_T lc = PM_DD(PM_TAB(pmi_logtab, 3 * i + 1), PM_TAB(pmi_logtab, 3 * i + 2));
  return pmi_dd_add(pmi_dd_add(kln2, lc), l1);
}

PM_FN double pm_log(double x) {
  if (PM_ISNAN(x)) return x;
  if (x < PM_D(0.0)) return pmi_nan();
  if (x == PM_D(0.0)) return -pmi_inf();
  if (PM_ISINF(x)) return x;
  PM_DD_T d = pmi_log_dd(x);
  PM_PRECISE double res = d.hi + d.lo;
  return res;
}

PM_FN double pm_log1p(double x) {
  if (PM_ISNAN(x)) return x;
  if (x < PM_D(-1.0)) return pmi_nan();
  if (x == PM_D(-1.0)) return -pmi_inf();
  if (PM_ISINF(x)) return x;
  if (PM_ABS(x) < pmi_pow2(-54)) return x;
  PM_DD_T u = pmi_two_sum(PM_D(1.0), x);
  PM_DD_T d = pmi_log_dd(u.hi);
  /* log(u.hi + u.lo) = log(u.hi) + c - c^2/2 + O(2^-159), c = u.lo/u.hi in
   * double-double (c^2/2 can still be a quarter ulp when x ~ 2^-52). */
  PM_PRECISE double ch = pm_div(u.lo, u.hi);
  PM_PRECISE double cr = PM_FMA(-ch, u.hi, u.lo);
  PM_PRECISE double cl = pm_div(cr, u.hi) - PM_D(0.5) * ch * ch;
  PM_DD_T e = pmi_dd_add(d, pmi_fast_two_sum(ch, cl));
  PM_PRECISE double res = e.hi + e.lo;
  return res;
}

#endif /* PMATH_EXP_LOG_GLSL */
