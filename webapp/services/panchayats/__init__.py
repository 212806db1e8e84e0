"""Setting up a Panchayat: the training Panchayat on its own clock (training) and the
quick start's demo data (demo). The top of the service layer: it may import every package below."""
