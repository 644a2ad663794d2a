public enum InboxCore {}
