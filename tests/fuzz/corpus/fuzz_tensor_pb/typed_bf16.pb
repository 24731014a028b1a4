*€€€à€B
typed_bf16