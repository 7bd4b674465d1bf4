"""Reads about findings that need more than a queryset."""
