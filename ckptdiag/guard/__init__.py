"""What keeps ckptdiag from ever being the incident: inputs refused before they are opened, one
guarded writer for every file, one redactor for every string, inflation bounded by the data."""
