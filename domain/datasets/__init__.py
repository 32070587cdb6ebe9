"""Datasets: uploads parsed line by line into examples, and the versions that hold them."""
