"""atensi: satu attention head, langkah demi langkah."""
