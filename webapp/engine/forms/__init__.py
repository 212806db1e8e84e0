"""Task forms (JSON Schema): self-contained and checked in linear time (schemas), fields that
apply only for one choice (conditions) and the form's texts in each language (form_texts)."""
