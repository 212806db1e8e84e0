"""Papers: the documents of a case as issued (documents) and what each says (document_texts),
the decision an appeal is against in words (appeal_words), the public notice board (notices) and
the PDF printer (pdf). Imports :mod:`webapp.services.money` and the packages below it."""
