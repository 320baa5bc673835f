"""recprivacy.federated"""
