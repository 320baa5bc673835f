"""recprivacy.metrics"""
