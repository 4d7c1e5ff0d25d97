"""Wayback-style replay: archival URLs, capture choice, rendering, Memento, pages."""
