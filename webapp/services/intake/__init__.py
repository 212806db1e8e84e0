"""Bringing in what a Panchayat ran on paper before it used the product: a running paper case at its
stage (:mod:`.paper_cases`), also several from one CSV file (:mod:`.paper_csv`)."""
