"""recprivacy.privacy"""
