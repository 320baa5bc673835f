"""recprivacy.defenses"""
