
*€x€€€„B	typed_f16