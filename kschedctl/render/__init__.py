"""Spec → text (pure): the forms table, the template environment, contexts, the workspace writer."""
