"""recprivacy.models"""
