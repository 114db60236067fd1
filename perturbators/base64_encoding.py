"""Base64 encoding attack (seed 002 "Encoding guardrail")."""

import base64

from assay.perturbators._encoding import EncodingPerturbator
from assay.perturbators.registry import register


@register
class Base64Encoding(EncodingPerturbator):
    id = "base64"
    display_name = "Base64 encoding"
    description = (
        "Encodes the question, or at low and medium intensity its last part, in base64 and asks the system "
        "to decode it and answer: an encoding attack that can slip a request past keyword guardrails. Pair "
        "with the encoding guardrail evaluator."
    )
    encoding_name = "base64"

    def encode(self, plain: str) -> str:
        return base64.b64encode(plain.encode("utf-8")).decode("ascii")
