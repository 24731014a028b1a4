/* float16 (IEEE binary16) and bfloat16 conversions, rounding to nearest even as
 * numpy and the ONNX reference do. Inline: they sit in the inner loops of kernels. */
#ifndef ETRT_BASE_HALF_H
#define ETRT_BASE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t etrt_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float etrt_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float etrt_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    /* zero or subnormal: mantissa * 2^-24 is exact in float */
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return etrt_bits_float(sign | 0x7f800000u | (mantissa << 13));
  return etrt_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

static inline uint16_t etrt_float_to_half(float f) {
  uint32_t x = etrt_float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) { /* inf or NaN (kept quiet, payload's top bits kept) */
    if (magnitude == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: inf */
  uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return (uint16_t)sign; /* below 2^-25: rounds to zero */
  uint32_t mantissa = magnitude & 0x7fffffu;
  uint32_t h, rest, half;
  if (exponent < 113) { /* half subnormal: units of 2^-24 */
    uint32_t full = mantissa | 0x800000u;
    uint32_t shift = 126 - exponent;
    h = full >> shift;
    rest = full & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  } else {
    h = ((exponent - 112) << 10) | (mantissa >> 13);
    rest = mantissa & 0x1fffu;
    half = 0x1000u;
  }
  /* a carry out of the mantissa correctly bumps the exponent (up to inf) */
  if (rest > half || (rest == half && (h & 1u))) ++h;
  return (uint16_t)(sign | h);
}

static inline float etrt_bfloat16_to_float(uint16_t b) {
  return etrt_bits_float((uint32_t)b << 16);
}

static inline uint16_t etrt_float_to_bfloat16(float f) {
  uint32_t x = etrt_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* double -> float rounding to odd: a second rounding (to half or bfloat16, both at
 * least two bits narrower than float) then gives the correctly rounded result, as
 * a direct conversion from double would. */
static inline float etrt_double_to_float_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t bits = etrt_float_bits(f);
  double back = (double)f;
  if ((back > d) == (d > 0)) --bits; /* rounded away from zero: step back toward it */
  return etrt_bits_float(bits | 1u);
}

static inline uint16_t etrt_double_to_half(double d) {
  return etrt_float_to_half(etrt_double_to_float_odd(d));
}

static inline uint16_t etrt_double_to_bfloat16(double d) {
  return etrt_float_to_bfloat16(etrt_double_to_float_odd(d));
}

#endif
