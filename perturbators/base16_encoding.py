"""Base16 (hex) encoding attack (seed 002 "Encoding guardrail")."""

import base64

from assay.perturbators._encoding import EncodingPerturbator
from assay.perturbators.registry import register


@register
class Base16Encoding(EncodingPerturbator):
    id = "base16"
    display_name = "Base16 (hex) encoding"
    description = (
        "Encodes the question, or at low and medium intensity its last part, in base16 (upper-case hex) "
        "and asks the system to decode it and answer: an encoding attack that can slip a request past "
        "keyword guardrails. Pair with the encoding guardrail evaluator."
    )
    encoding_name = "base16"

    def encode(self, plain: str) -> str:
        return base64.b16encode(plain.encode("utf-8")).decode("ascii")
