"""recprivacy.report"""
