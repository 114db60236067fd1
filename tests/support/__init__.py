"""Helpers shared by test folders: real servers started on free loopback ports."""
