"""recprivacy.attacks"""
