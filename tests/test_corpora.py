from pathlib import Path

import pytest

from assay.corpora import load_corpus


def minimal_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with a Helvetica text layer, written by hand so the test needs no PDF writer."""
    text_ops = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text_ops} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> "
        b"/Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    body, offsets = b"%PDF-1.4\n", []
    for number, content in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n".encode() + content + b"\nendobj\n"
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    body += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return body


def test_markdown_text_and_pdf_documents_load(tmp_path: Path) -> None:
    (tmp_path / "fees.md").write_text("# Fees\n\nA replacement card costs £10.")
    (tmp_path / "notes.txt").write_text("Branches open at 9am.")
    (tmp_path / "policy.pdf").write_bytes(minimal_pdf(["Complaints Policy", "We reply within 8 weeks."]))
    corpus = load_corpus(tmp_path)
    documents = {document.uri: document for document in corpus.documents}
    assert sorted(documents) == ["fees.md", "notes.txt", "policy.pdf"]
    assert documents["fees.md"].title == "Fees"
    assert "We reply within 8 weeks." in documents["policy.pdf"].text


def test_bad_documents_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(ValueError, match=r"broken\.pdf"):
        load_corpus(tmp_path)
    (tmp_path / "broken.pdf").unlink()
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt: not UTF-8"):
        load_corpus(tmp_path)
    (tmp_path / "latin1.txt").unlink()
    with pytest.raises(ValueError, match=r"has no \.md, \.txt or \.pdf documents"):
        load_corpus(tmp_path)
