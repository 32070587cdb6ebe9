"""The built-in reward metrics, one module per kind of answer: each scores an answer against its reference."""
