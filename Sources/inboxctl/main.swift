print("inboxctl")
