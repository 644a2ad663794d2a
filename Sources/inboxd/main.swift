print("inboxd")
