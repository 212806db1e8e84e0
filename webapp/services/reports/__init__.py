"""The Panchayat's books: the registers and statements (registers) and their CSV
(registers_csv). Imports running, money and the packages below them."""
