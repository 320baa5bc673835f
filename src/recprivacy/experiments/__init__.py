"""recprivacy.experiments"""
