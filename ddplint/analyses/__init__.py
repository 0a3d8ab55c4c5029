"""Analyses shared by several rules: rank regions, sampler and loader flow, pickling.

They read the engine's semantic model and never import the rule layer.
"""
